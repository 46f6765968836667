/**
 * The request ledger, kept in the state file: every request id the daemon has seen, so that a
 * request is executed at most once, ever, and its result survives until the server acknowledges
 * it. An entry is
 *
 * - `running` from just before the operation starts (written first, so a daemon that dies
 *   mid-operation knows, when it starts again, not to run it again: the entry becomes a failed
 *   `interrupted` result);
 * - `done` with the outcome, which is (re-)sent until acknowledged;
 * - `acknowledged`: the outcome is forgotten; the id is remembered for a while (the newest
 *   ACKNOWLEDGED_KEPT ids, none older than ACKNOWLEDGED_MEMORY; up to FORGET_BATCH more wait to be
 *   forgotten together) so that a late repeat is answered `already_executed` instead of running
 *   again. The server never re-sends a request whose result it acknowledged; this is a second
 *   line of defence, kept small because the whole file is rewritten on every change.
 *
 * `running` and `done` are written before the daemon goes on; an acknowledgement is written with
 * the next request's entry, or when the daemon stops (StateFile.modifyUnwritten): one write fewer
 * a request. A crash may lose it; the result is then `done` again after the restart, sent again,
 * and the server, which keeps the first result and ignores copies, acknowledges it again.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import type { Outcome, RequestId } from "../domain/machines/DaemonProtocol.ts"
import { type DaemonState, type LedgerEntry, StateFile } from "./StateFile.ts"

export const ACKNOWLEDGED_MEMORY = Duration.hours(1)
export const ACKNOWLEDGED_KEPT = 1000
/** How many acknowledged ids past ACKNOWLEDGED_KEPT wait to be forgotten together. */
export const FORGET_BATCH = 100

/** What to do with a request id the server sent. */
export type Admission =
  | { readonly _tag: "new" }
  | { readonly _tag: "running" }
  | { readonly _tag: "done"; readonly outcome: Outcome }
  | { readonly _tag: "acknowledged" }

export interface Unacknowledged {
  readonly request_id: RequestId
  readonly outcome: Outcome
}

export const interruptedOutcome: Outcome = {
  outcome: "failed",
  error: { code: "interrupted", message: "The daemon stopped while this request ran; it was not run again." }
}

export class RequestLedger extends Context.Service<RequestLedger, {
  /** Admits a request id: a new one is recorded as running (before it runs). */
  readonly admit: (id: RequestId) => Effect.Effect<Admission>
  readonly complete: (id: RequestId, outcome: Outcome) => Effect.Effect<void>
  readonly acknowledge: (ids: ReadonlyArray<RequestId>) => Effect.Effect<void>
  /** The outcomes the server has not acknowledged, oldest first. */
  readonly unacknowledged: Effect.Effect<ReadonlyArray<Unacknowledged>>
}>()("daemon/RequestLedger") {
  static readonly layer = Layer.effect(RequestLedger, Effect.gen(function*() {
    const stateFile = yield* StateFile
    const withRequests = (state: DaemonState, requests: DaemonState["requests"]): DaemonState => ({ ...state, requests })

    // Requests that were running when the daemon last stopped did not finish; they never run again.
    const startedAt = yield* Clock.currentTimeMillis
    yield* stateFile.modify((state) => {
      const running = Object.entries(state.requests).filter(([, entry]) => entry.state === "running")
      if (running.length === 0) return [undefined, state]
      const requests = { ...state.requests }
      for (const [id] of running) requests[id] = { state: "done", at: startedAt, outcome: interruptedOutcome }
      return [undefined, withRequests(state, requests)]
    })

    const admit = (id: RequestId) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        stateFile.modify((state): readonly [Admission, DaemonState] => {
          const entry: LedgerEntry | undefined = state.requests[id]
          if (entry === undefined) {
            return [{ _tag: "new" }, withRequests(state, { ...state.requests, [id]: { state: "running", at: now } })]
          }
          switch (entry.state) {
            case "running":
              return [{ _tag: "running" }, state]
            case "done":
              return [{ _tag: "done", outcome: entry.outcome }, state]
            case "acknowledged":
              return [{ _tag: "acknowledged" }, state]
          }
        }))

    const complete = (id: RequestId, outcome: Outcome) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        stateFile.modify((state) =>
          state.requests[id]?.state === "running"
            ? [undefined, withRequests(state, { ...state.requests, [id]: { state: "done", at: now, outcome } })]
            : [undefined, state]
        ))

    const acknowledge = (ids: ReadonlyArray<RequestId>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        stateFile.modifyUnwritten((state) => {
          if (!ids.some((id) => state.requests[id]?.state === "done")) return [undefined, state]
          const requests = { ...state.requests }
          for (const id of ids) {
            if (requests[id]?.state === "done") requests[id] = { state: "acknowledged", at: now }
          }
          const forgetBefore = now - Duration.toMillis(ACKNOWLEDGED_MEMORY)
          const acknowledged = Object.entries(requests).filter(([, entry]) => entry.state === "acknowledged")
          const oldest = acknowledged.reduce((at, [, entry]) => Math.min(at, entry.at), Infinity)
          // Forgotten in batches: the ids are sorted once FORGET_BATCH are too many (or one is past
          // its memory), not at every acknowledgement.
          if (acknowledged.length >= ACKNOWLEDGED_KEPT + FORGET_BATCH || oldest < forgetBefore) {
            acknowledged.sort(([, a], [, b]) => b.at - a.at).forEach(([id, entry], index) => {
              if (index >= ACKNOWLEDGED_KEPT || entry.at < forgetBefore) delete requests[id]
            })
          }
          return [undefined, withRequests(state, requests)]
        }))

    const unacknowledged = Effect.map(stateFile.get, (state) =>
      Object.entries(state.requests)
        .flatMap(([request_id, entry]) => (entry.state === "done" ? [{ request_id, outcome: entry.outcome, at: entry.at }] : []))
        .sort((a, b) => a.at - b.at)
        .map(({ request_id, outcome }) => ({ request_id, outcome })))

    return { admit, complete, acknowledge, unacknowledged }
  }))
}
