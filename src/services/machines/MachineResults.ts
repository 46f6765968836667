/**
 * A daemon's result for a request (docs/daemon-protocol.md, "Delivery rules"): the first one is
 * stored; for a tool call's request, in the same statement (or, when something is in the way, the
 * same transaction), the call completes with it on the agent's timeline (unless the call was
 * cancelled meanwhile); after the commit the turn's wait is resolved and the waiters (the files
 * and workspace routes) are woken: this process's at once, the other processes' by a signal
 * (Postgres only), with a look at the table every POLL as the safety net. Later copies change
 * nothing.
 * The caller acknowledges the result to the daemon once this returns.
 *
 * A tool's result has the values of the secrets its command could read (the call's
 * `secret_env_overlay`, a pool machine's `default_machine_secret_env`) replaced with
 * `[redacted secret sec_…]` before it is stored (docs/secrets.md, "Redaction of echoed values").
 */
import { Context, Deferred, Effect, Layer, Option, Result, Schema } from "effect"
import { type Operation, type Outcome, outputSchemaOf, type Result as DaemonResult } from "../../domain/machines/DaemonProtocol.ts"
import { OUTCOME_MAX_BYTES } from "../../domain/machines/MessageSizes.ts"
import type { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import type { AgentId, MachineId, ToolCallId, TurnId } from "../../domain/shared/Ids.ts"
import { Secrets } from "../configuration/Secrets.ts"
import { EventNotifications } from "../runtime/EventNotifications.ts"
import { Timeline } from "../runtime/Timeline.ts"
import { ToolCallsRepository } from "../runtime/ToolCallsRepository.ts"
import { ToolDispatch } from "../runtime/ToolDispatch.ts"
import { TurnLifecycle } from "../runtime/TurnLifecycle.ts"
import { TurnSignals } from "../runtime/TurnSignals.ts"
import { redactStrings, secretRedactor, type UsedSecret } from "../shared/SecretRedaction.ts"
import { MachinePoolsRepository } from "./MachinePoolsRepository.ts"
import { MachineRequestsRepository, type RequestWithCall, type StoredRequest } from "./MachineRequestsRepository.ts"
import { MachinesRepository } from "./MachinesRepository.ts"

/** What the model reads: the tool's output as JSON, or the failure's code and message. */
export const resultBlocks = (outcome: Outcome): ReadonlyArray<ContentBlock> => [{
  type: "text",
  text: outcome.outcome === "succeeded"
    ? JSON.stringify(outcome.output)
    : `${outcome.error.code}: ${outcome.error.message}${
      outcome.error.current_digest === undefined ? "" : ` (current digest ${outcome.error.current_digest})`
    }`
}]

const POLL = "500 millis"

/** The signal between processes (EventNotifications.signal) that a request's result is stored. */
const COMPLETED = "machine-requests-completed"

const outcomeMaxBytes = (operation: Operation) =>
  operation.operation === "tool" ? OUTCOME_MAX_BYTES.tool : OUTCOME_MAX_BYTES.other

/** The most of a schema's issue a refusal quotes (an output can be large, and so its issue). */
const ISSUE_MAX_CHARS = 2000

/** What an operation is called in a refusal: the tool's name for a tool call. */
const nameOf = (operation: Operation) => operation.operation === "tool" ? operation.tool : operation.operation

/**
 * A daemon's outcome as the server takes it: a succeeded `output` must decode with
 * `outputSchemaOf(operation)` (its caps included), and the whole outcome fit in the operation's
 * OUTCOME_MAX_BYTES; else a failed outcome `internal_error` saying why, which is stored (and
 * acknowledged) in its place, so the call and the turn go on.
 */
const takenOutcome = (operation: Operation, received: Outcome): Outcome => {
  const refused = (why: string): Outcome => ({
    outcome: "failed",
    error: { code: "internal_error", message: `the daemon's output for ${nameOf(operation)} did not match the protocol: ${why}` }
  })
  const bytes = Buffer.byteLength(JSON.stringify(received))
  if (bytes > outcomeMaxBytes(operation)) {
    return refused(`its result takes ${bytes} bytes of JSON; at most ${outcomeMaxBytes(operation)} are stored`)
  }
  if (received.outcome === "failed") return received
  const decoded = Schema.decodeUnknownResult(outputSchemaOf(operation))(received.output)
  return Result.isSuccess(decoded) ? received : refused(decoded.failure.message.slice(0, ISSUE_MAX_CHARS))
}

const make = Effect.gen(function*() {
  const requests = yield* MachineRequestsRepository
  const machines = yield* MachinesRepository
  const toolCalls = yield* ToolCallsRepository
  const timeline = yield* Timeline
  const lifecycle = yield* TurnLifecycle
  const dispatcher = yield* ToolDispatch
  const signals = yield* TurnSignals
  const secrets = yield* Secrets
  const pools = yield* MachinePoolsRepository
  const notifications = yield* EventNotifications
  /** Waiters of this process, by request id. */
  const waiters = new Map<string, Deferred.Deferred<Outcome>>()

  /** The stored outcome of a request another process completed, for this process's waiter of it. */
  const completedElsewhere = (requestId: string) =>
    Effect.gen(function*() {
      const waiter = waiters.get(requestId)
      if (waiter === undefined) return
      const outcome = yield* requests.findOutcome(requestId)
      if (Option.isSome(outcome)) yield* Deferred.succeed(waiter, outcome.value)
    }).pipe(Effect.catchCause((cause) => Effect.logWarning(`reading the result of request ${requestId} failed`, cause)))
  yield* notifications.onSignal(COMPLETED, (ids) => Effect.forEach(ids, completedElsewhere, { discard: true }))

  /** The secrets a tool request's command could read: its overlay's, and its pool machine's defaults (a deleted one is left out). */
  const secretsReadable = (request: StoredRequest) =>
    Effect.gen(function*() {
      const ids = new Set(Object.values(request.secret_env).filter((id) => id !== null))
      if (request.machine_pool_id !== null) {
        const pool = yield* pools.findById(request.machine_pool_id)
        if (Option.isSome(pool)) for (const id of Object.values(pool.value.default_machine_secret_env)) ids.add(id)
      }
      const revealed = yield* Effect.forEach(ids, (id) => Effect.option(secrets.reveal(id)))
      return [...ids].flatMap((id, i): Array<UsedSecret> =>
        Option.match(revealed[i], { onNone: () => [], onSome: (value) => [{ id, value }] })
      )
    })

  /** A tool's outcome with the values of the secrets its command could read redacted. */
  const redacted = (request: StoredRequest, outcome: Outcome) =>
    Effect.map(secretsReadable(request), (used): Outcome =>
      used.length === 0 ? outcome : redactStrings(outcome, secretRedactor(used)) as Outcome)

  /**
   * Completes a running tool call's request and the call with `outcome`, the call's result
   * appended, in one statement (TurnLifecycle.completeCallAlone); false when something was in the
   * way (nothing was written then).
   */
  const completeCallAlone = (request: RequestWithCall, agentId: AgentId, callId: ToolCallId, turnId: TurnId, outcome: Outcome) =>
    Effect.gen(function*() {
      const completedRequest = yield* requests.completeAfter("open_call", request.request_id, outcome)
      const completed = yield* lifecycle.completeCallAlone(
        agentId,
        turnId,
        callId,
        outcome.outcome,
        resultBlocks(outcome),
        (turn, eventId) => [
          toolCalls.lockOpenBefore(turn, callId, "built_in"),
          completedRequest,
          machines.touchAfter("completed_request"),
          toolCalls.completeAfter("completed_request", callId, outcome.outcome, eventId)
        ]
      )
      return Option.isSome(completed)
    })

  /**
   * Stores the outcome of a request and completes its tool call, if it has one, in a transaction
   * that locks the agent first; the token of the turn's wait on the call when it completed it.
   */
  const completeInTransaction = (request: RequestWithCall, outcome: Outcome) => {
    const { agent_id: agentId, tool_call_id: callId } = request
    return timeline.transaction(Effect.gen(function*() {
      if (agentId !== null) yield* lifecycle.lockAgent(agentId)
      const stored = yield* requests.complete(request.request_id, outcome)
      // A pool machine's idle time starts again with each result.
      if (Option.isSome(stored) && stored.value.machine_pool_id !== null && stored.value.machine_id !== null) {
        yield* machines.touch(stored.value.machine_id)
      }
      if (Option.isNone(stored) || agentId === null || callId === null) return Option.none<string>()
      const call = yield* toolCalls.find(agentId, callId, true)
      if (Option.isNone(call) || call.value.state !== "running") return Option.none<string>()
      yield* dispatcher.completeCall(agentId, call.value.turn_id, callId, outcome.outcome, resultBlocks(outcome))
      yield* lifecycle.refreshStatus(agentId, call.value.turn_id)
      return Option.fromNullishOr(call.value.deferred_token)
    }))
  }

  /**
   * Stores the outcome of a request (the first one); completes its tool call if it has one: in one
   * statement while the call runs and nothing is in the way, else in a transaction. With `from`,
   * the outcome is a daemon's: stored only when the request was sent to that machine.
   */
  const complete = (requestId: string, received: Outcome, from?: MachineId) =>
    Effect.gen(function*() {
      const found = yield* requests.findWithCall(requestId)
      if (Option.isNone(found) || found.value.state === "done") return
      const request = found.value
      if (from !== undefined && request.machine_id !== from) {
        return yield* Effect.logWarning(
          `machine ${from} sent a result for request ${requestId}, which is not its own; it was ignored`
        )
      }
      const { agent_id: agentId, call_turn_id: turnId, tool_call_id: callId } = request
      const taken = from === undefined ? received : takenOutcome(request.operation, received)
      if (taken !== received && taken.outcome === "failed") {
        yield* Effect.logWarning(`machine ${from} sent a result for request ${requestId} that was refused: ${taken.error.message}`)
      }
      const outcome = callId === null ? taken : yield* redacted(request, taken)
      const completedAlone = agentId !== null && callId !== null && turnId !== null && request.call_state === "running" &&
        (yield* completeCallAlone(request, agentId, callId, turnId, outcome))
      const signal = completedAlone
        ? Option.fromNullishOr(request.call_deferred_token)
        : yield* completeInTransaction(request, outcome)
      if (Option.isSome(signal) && callId !== null) {
        yield* signals.send([{ kind: "result", toolCallId: callId, token: signal.value, value: "completed" }])
      }
      const waiter = waiters.get(requestId)
      if (waiter !== undefined) yield* Deferred.succeed(waiter, outcome)
      // A tool call's turn waits through its signal above; any other request may have its waiter elsewhere.
      else if (callId === null) yield* notifications.signal(COMPLETED, [requestId])
    })

  /** A result a machine's daemon sent: the outcome of a request sent to that machine, else ignored. */
  const fromDaemon = (machineId: MachineId, result: DaemonResult) => {
    const { request_id, type: _, ...outcome } = result
    return complete(request_id, outcome as Outcome, machineId)
  }

  /**
   * Waits for a request's outcome: woken at once when this process stores it, else found by
   * looking at the table every POLL (another process stored it).
   */
  const await_ = (requestId: string) =>
    Effect.acquireUseRelease(
      Effect.tap(Deferred.make<Outcome>(), (deferred) => Effect.sync(() => waiters.set(requestId, deferred))),
      (deferred) =>
        Effect.raceFirst(
          Deferred.await(deferred),
          Effect.gen(function*() {
            while (true) {
              yield* Effect.sleep(POLL)
              const outcome = yield* requests.findOutcome(requestId)
              if (Option.isSome(outcome)) return outcome.value
            }
          })
        ),
      () => Effect.sync(() => waiters.delete(requestId))
    )

  return { complete, fromDaemon, await: await_ } as const
})

export class MachineResults extends Context.Service<MachineResults, Effect.Success<typeof make>>()("MachineResults") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      EventNotifications.layer,
      MachineRequestsRepository.layer,
      MachinesRepository.layer,
      ToolCallsRepository.layer,
      Timeline.layer,
      TurnLifecycle.layer,
      ToolDispatch.layer,
      TurnSignals.layer,
      Secrets.layer,
      MachinePoolsRepository.layer
    ])
  )
}
