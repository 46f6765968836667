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
 *   line of defence, kept small because loading replays the ledger, and the snapshot that
 *   holds it is written again as its journal grows (StateFile.ts).
 *
 * `running` and `done` are written before the daemon goes on; an acknowledgement is written with
 * the next request's entry, or when the daemon stops (StateFile.changeUnwritten): one write fewer
 * a request. A crash may lose it; the result is then `done` again after the restart, sent again,
 * and the server, which keeps the first result and ignores copies, acknowledges it again.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import type { Outcome, RequestId } from "../domain/machines/DaemonProtocol.ts"
import { type LedgerChange, type LedgerEntry, StateFile } from "./StateFile.ts"

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
    const none: ReadonlyArray<LedgerChange> = []

    // Requests that were running when the daemon last stopped did not finish; they never run again.
    const startedAt = yield* Clock.currentTimeMillis
    yield* stateFile.change((requests) => {
      const interrupted: Array<LedgerChange> = []
      for (const [id, entry] of requests) {
        if (entry.state === "running") interrupted.push([id, { state: "done", at: startedAt, outcome: interruptedOutcome }])
      }
      return [undefined, interrupted]
    })

    const admit = (id: RequestId) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        stateFile.change((requests): readonly [Admission, ReadonlyArray<LedgerChange>] => {
          const entry = requests.get(id)
          if (entry === undefined) return [{ _tag: "new" }, [[id, { state: "running", at: now }]]]
          switch (entry.state) {
            case "running":
              return [{ _tag: "running" }, none]
            case "done":
              return [{ _tag: "done", outcome: entry.outcome }, none]
            case "acknowledged":
              return [{ _tag: "acknowledged" }, none]
          }
        }))

    const complete = (id: RequestId, outcome: Outcome) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        stateFile.change((requests) =>
          requests.get(id)?.state === "running" ? [undefined, [[id, { state: "done", at: now, outcome }]]] : [undefined, none]
        ))

    /**
     * The acknowledged ids to forget once `acknowledging` more are acknowledged: none until
     * FORGET_BATCH are too many (or one is past its memory), then all but the newest
     * ACKNOWLEDGED_KEPT and those past their memory, so that the ids are sorted once a batch.
     */
    const toForget = (requests: ReadonlyMap<RequestId, LedgerEntry>, acknowledging: number, now: number) => {
      const forgetBefore = now - Duration.toMillis(ACKNOWLEDGED_MEMORY)
      let count = acknowledging
      let oldest = Infinity
      for (const entry of requests.values()) {
        if (entry.state !== "acknowledged") continue
        count++
        oldest = Math.min(oldest, entry.at)
      }
      if (count < ACKNOWLEDGED_KEPT + FORGET_BATCH && oldest >= forgetBefore) return none
      const acknowledged: Array<readonly [RequestId, number]> = []
      for (const [id, entry] of requests) if (entry.state === "acknowledged") acknowledged.push([id, entry.at])
      // The ids being acknowledged are the newest: they take the first places kept.
      return acknowledged
        .sort(([, a], [, b]) => b - a)
        .filter(([, at], index) => index + acknowledging >= ACKNOWLEDGED_KEPT || at < forgetBefore)
        .map(([id]): LedgerChange => [id, null])
    }

    const acknowledge = (ids: ReadonlyArray<RequestId>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        stateFile.changeUnwritten((requests) => {
          const done = [...new Set(ids)].filter((id) => requests.get(id)?.state === "done")
          if (done.length === 0) return [undefined, none]
          const acknowledged = done.map((id): LedgerChange => [id, { state: "acknowledged", at: now }])
          return [undefined, [...acknowledged, ...toForget(requests, done.length, now)]]
        }))

    const unacknowledged = Effect.map(stateFile.requests, (requests) =>
      [...requests]
        .flatMap(([request_id, entry]) => (entry.state === "done" ? [{ request_id, outcome: entry.outcome, at: entry.at }] : []))
        .sort((a, b) => a.at - b.at)
        .map(({ request_id, outcome }) => ({ request_id, outcome })))

    return { admit, complete, acknowledge, unacknowledged }
  }))
}
