/**
 * Waits of turns handed over in memory (docs/runtime.md, "A wait handed over in memory"). A
 * turn's workflow that waits for a call's result (or answer) first waits here, in its process, for
 * up to IN_MEMORY_WAIT: a resolution committed meanwhile in the same process is handed to it
 * (TurnSignals), one committed by another process wakes it through the agent's event
 * notifications, and the workflow goes on without the durable signal (a `deferred` message saved
 * and processed, the workflow's suspension, its reset and its replay: nine statements a call).
 * The call's row is the wait's journal: a workflow that replays a step it did not record in this
 * run reads the call first, one woken by another process reads it too, and so does one whose
 * agent's timeline went on between the step's record and the wait (a wake-up may have come before
 * the wait's waiter); each read comes after the waiter is registered. When nothing resolved
 * the call in time the workflow waits durably, as before, and from then on every resolution of the
 * call sends its signal.
 *
 * A workflow's waits are kept only while its body runs here: a suspended, finished or moved
 * workflow has none, so a resolution made meanwhile sends its signal. When the process stops, the
 * waits in memory go durable at once (`close`), so that no workflow holds the stop up.
 *
 * Approvals always wait durably: the workflow needs their decision, which only the signal carries.
 */
import { DurableDeferred } from "effect/workflow"
import { Clock, Context, Deferred, Duration, Effect, Layer, Option } from "effect"
import type { ToolCallId } from "../../domain/shared/Ids.ts"
import { EventNotifications } from "./EventNotifications.ts"
import { ToolCallsRepository } from "./ToolCallsRepository.ts"
import { type PlannedCall, turnExecutionId, turnSignal, type SignalKind, type TurnPayload } from "./TurnWorkflow.ts"

/** How long a workflow waits in memory for a call's resolution before it waits durably. */
export const IN_MEMORY_WAIT = Duration.seconds(5)

/** Executions whose waits are kept, at most; past it, the one kept longest is forgotten (its waits go durable). */
const MAX_EXECUTIONS = 10_000

/** What waits on a call after its approval, if anything: its result or its answer. */
type ResultKind = Exclude<SignalKind, "approval">

/** The waits of one turn's execution while its body runs here, by the deferred's name (`<kind>/<tool call id>`). */
interface ExecutionWaits {
  /** Resolved in this process and handed over: their signals were not sent. */
  readonly handed: Set<string>
  /**
   * Recorded by a step of this run, with the agent's last sequence this process knew just after
   * (EventNotifications.lastKnown): nothing resolved them before that.
   */
  readonly expected: Map<string, number | undefined>
  /** Waited for durably: their resolutions are sent as signals. */
  readonly durable: Set<string>
  /** The workflow's wait in memory, woken by a hand-over. */
  readonly waiters: Map<string, Deferred.Deferred<void>>
}

const waitName = (kind: SignalKind, toolCallId: ToolCallId) => `${kind}/${toolCallId}`

/** A wait of a turn resolved from outside its workflow: which wait (TurnSignals' Signal adds its value). */
export interface ResolvedWait {
  readonly kind: SignalKind
  readonly toolCallId: ToolCallId
  readonly token: string
}

const make = Effect.gen(function*() {
  const toolCalls = yield* ToolCallsRepository
  const notifications = yield* EventNotifications
  const executions = new Map<string, ExecutionWaits>()
  /** The process is stopping: every wait is durable. */
  let closed = false

  const waitsOf = (executionId: string) => {
    const existing = executions.get(executionId)
    if (existing !== undefined) return existing
    if (executions.size >= MAX_EXECUTIONS) executions.delete(executions.keys().next().value!)
    const created: ExecutionWaits = { handed: new Set(), expected: new Map(), durable: new Set(), waiters: new Map() }
    executions.set(executionId, created)
    return created
  }

  /** Whether the call's wait is over: the call completed or cancelled (or gone with its agent). */
  const settled = (payload: TurnPayload, toolCallId: ToolCallId) =>
    Effect.map(
      toolCalls.find(payload.agent_id, toolCallId),
      (call) => Option.isNone(call) || call.value.state === "completed" || call.value.state === "cancelled"
    )

  /**
   * Whether the call's wait ends within IN_MEMORY_WAIT: handed over here, or its result among the
   * events this process appended, or its row settled. The row is read when the wait may have
   * missed its wake-up (`missedWake`, asked once the first waiter is registered) and after a
   * wake-up by another process's append; each time after the next waiter is registered, so that an
   * append committed meanwhile still wakes it.
   */
  const endsInMemory = (
    payload: TurnPayload,
    waits: ExecutionWaits,
    name: string,
    toolCallId: ToolCallId,
    missedWake: () => boolean
  ) =>
    Effect.gen(function*() {
      const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(IN_MEMORY_WAIT)
      let mayHaveMissed = missedWake
      while (!waits.handed.has(name)) {
        if (closed) return false
        const remaining = deadline - (yield* Clock.currentTimeMillis)
        if (remaining <= 0) return false
        const wake = yield* Effect.scoped(Effect.gen(function*() {
          const handed = Deferred.makeUnsafe<void>()
          waits.waiters.set(name, handed)
          yield* Effect.addFinalizer(() => Effect.sync(() => waits.waiters.delete(name)))
          const woken = yield* notifications.nextWake(payload.agent_id, Duration.millis(remaining))
          // Handed over, or settled, before the waiters were registered.
          if (waits.handed.has(name) || (mayHaveMissed() && (yield* settled(payload, toolCallId)))) return "over" as const
          return yield* Effect.raceFirst(Effect.as(Deferred.await(handed), Option.none()), woken)
        }))
        if (wake === "over") return true
        if (Option.isNone(wake)) {
          mayHaveMissed = () => false
          continue
        }
        const events = wake.value
        // Woken by another process's append (no events): the row is read once the next waiter is registered.
        mayHaveMissed = () => events === undefined
        if (events?.some((event) => event.event_kind === "tool_result" && event.tool_call_id === toolCallId)) return true
      }
      return true
    })

  return {
    /** The waits of a step this run just recorded (its calls' results and answers), kept before anything can resolve them. */
    expect: (payload: TurnPayload, calls: ReadonlyArray<PlannedCall>) =>
      Effect.map(turnExecutionId(payload), (executionId) => {
        const seen = notifications.lastKnown(payload.agent_id)
        for (const call of calls) {
          if (call.then !== "none") waitsOf(executionId).expected.set(waitName(call.then, call.tool_call_id), seen)
        }
      }),

    /** The workflow's wait for a call's result or answer: in memory first, then durable. */
    wait: (payload: TurnPayload, executionId: string, kind: ResultKind, toolCallId: ToolCallId) =>
      Effect.gen(function*() {
        const waits = waitsOf(executionId)
        const name = waitName(kind, toolCallId)
        if (waits.handed.has(name)) return
        if (!waits.durable.has(name)) {
          // A step replayed here was recorded by an earlier run: its call may be resolved already.
          // One recorded by this run may have been resolved since by another process, whose
          // wake-up came before the wait's waiter: the agent's timeline went on meanwhile.
          const missedWake = () =>
            !waits.expected.has(name) || waits.expected.get(name) !== notifications.lastKnown(payload.agent_id)
          if (yield* endsInMemory(payload, waits, name, toolCallId, missedWake)) return
          // From here on a resolution sends its signal; one committed before was handed over or is read below.
          waits.durable.add(name)
          if (waits.handed.has(name)) return
        }
        if (yield* settled(payload, toolCallId)) return
        yield* DurableDeferred.await(turnSignal(kind, toolCallId))
      }),

    /**
     * Hands a resolution, committed, to its workflow while that runs here and does not wait for it
     * durably: whether it did (then its signal must not be sent).
     */
    handOver: (resolved: ResolvedWait): boolean => {
      if (closed || resolved.kind === "approval") return false
      const waits = executions.get(DurableDeferred.TokenParsed.fromString(resolved.token).executionId)
      const name = waitName(resolved.kind, resolved.toolCallId)
      if (waits === undefined || waits.durable.has(name)) return false
      waits.handed.add(name)
      const waiter = waits.waiters.get(name)
      if (waiter !== undefined) Deferred.doneUnsafe(waiter, Effect.void)
      return true
    },

    /** Whether this resolution was handed to its workflow running here (recovery does not send its signal). */
    handedOver: (resolved: ResolvedWait): boolean =>
      executions.get(DurableDeferred.TokenParsed.fromString(resolved.token).executionId)?.handed
        .has(waitName(resolved.kind, resolved.toolCallId)) ?? false,

    /** The workflow's body stopped running here (finished, suspended or moved): its waits are forgotten. */
    forget: (executionId: string) => Effect.sync(() => executions.delete(executionId)),

    /** The process stops: every wait in memory goes durable now, and every later one at once. */
    close: Effect.sync(() => {
      closed = true
      for (const waits of executions.values()) {
        for (const waiter of waits.waiters.values()) Deferred.doneUnsafe(waiter, Effect.void)
      }
    })
  } as const
})

export class TurnWaits extends Context.Service<TurnWaits, Effect.Success<typeof make>>()("TurnWaits") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide([ToolCallsRepository.layer, EventNotifications.layer]))
}
