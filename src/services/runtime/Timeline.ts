/**
 * The agent timeline: append events with gapless per-agent sequences, read them in pages
 * (spec 4.1), and wait for new ones (for streaming).
 *
 * `append` takes the agent's next sequences (`AgentsRepository.allocateSequences`, which locks
 * the agent row), so sequences are allocated in the same transaction as the insert and
 * concurrent appends to one agent serialize. Called inside a caller's transaction, it joins it:
 * the events become visible when that commits.
 *
 * Waiting: every append belongs to a `transaction` (its own, or the caller's it joins), which
 * wakes this process's waiters once it commits (a waiter woken earlier would read on another
 * connection before the commit, find nothing and sleep until its next poll), and tells the other
 * processes sharing the database through EventNotifications (a Postgres NOTIFY sent inside the
 * transaction, delivered at its commit). A waiter also reads every POLL_INTERVAL, a safety net
 * only (docs/scale-out.md).
 */
import { Clock, Duration, Effect, FiberRef, Option, Queue } from "effect"
import { type AgentId, EventId } from "../../domain/shared/Ids.ts"
import { DEFAULT_EVENTS_LIMIT, type EventsPage, type EventsQuery, type NewEvent } from "../../domain/runtime/Events.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { Transactions } from "../shared/Transactions.ts"
import { AgentsRepository } from "./AgentsRepository.ts"
import { type AgentRef, dataOf, AgentEventsRepository } from "./AgentEventsRepository.ts"
import { EventNotifications } from "./EventNotifications.ts"

export const POLL_INTERVAL = Duration.seconds(5)

export class Timeline extends Effect.Service<Timeline>()("Timeline", {
  scoped: Effect.gen(function*() {
    const events = yield* AgentEventsRepository
    const agents = yield* AgentsRepository
    const ids = yield* IdGenerator
    const transactions = yield* Transactions
    const notifications = yield* EventNotifications
    /** The agents whose events the current `transaction` appended, woken when it commits. */
    const uncommittedAppends = yield* FiberRef.make<Set<AgentId> | undefined>(undefined)

    /**
     * A transaction that appends events (or joins the one in progress): the other processes are
     * told inside it, this process's waiters once it has committed.
     */
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(FiberRef.get(uncommittedAppends), (outer) => {
        if (outer !== undefined) return transactions.transaction(effect)
        const pending = new Set<AgentId>()
        return transactions.transaction(
          Effect.locally(effect, uncommittedAppends, pending).pipe(Effect.tap(() => notifications.announce(pending)))
        ).pipe(Effect.tap(() => notifications.wake(pending)))
      })

    const appending = (agentId: AgentId) =>
      Effect.flatMap(FiberRef.get(uncommittedAppends), (pending) => Effect.sync(() => pending?.add(agentId)))

    /** The sequence of each new event within its turn: the opening event is 0, the turn's later events count up. */
    const turnSequences = (agentId: AgentId, newEvents: ReadonlyArray<NewEvent>) =>
      Effect.map(
        events.lastTurnSequences(agentId, [...new Set(newEvents.flatMap((event) => event.turn_id === null ? [] : [event.turn_id]))]),
        (last) =>
          newEvents.map((event) => {
            if (event.turn_id === null) return null
            const next = (last.get(event.turn_id) ?? -1) + 1
            last.set(event.turn_id, next)
            return next
          })
      )

    /**
     * Runs an append in the caller's transaction when there is one (no savepoint: an append
     * fails only by a defect, which rolls the whole transaction back), else in its own.
     */
    const appendTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(FiberRef.get(uncommittedAppends), (outer) => outer === undefined ? transaction(effect) : effect)

    const append = (agentId: AgentId, newEvents: ReadonlyArray<NewEvent>) =>
      appendTransaction(Effect.gen(function*() {
        yield* appending(agentId)
        const allocated = yield* agents.allocateSequences(agentId, newEvents.length)
        if (Option.isNone(allocated)) return yield* Effect.dieMessage(`Events appended to agent ${agentId}, which does not exist`)
        const { agent_config_id, last_sequence, org_id, project_id } = allocated.value
        const first = last_sequence - newEvents.length + 1
        const sequences = yield* turnSequences(agentId, newEvents)
        const eventIds = yield* Effect.forEach(newEvents, () => ids.make(EventId))
        return yield* events.insert(
          { id: agentId, org_id, project_id },
          newEvents.map((event, index) => ({
            sequence: first + index,
            id: eventIds[index],
            agent_config_id,
            turn_id: event.turn_id,
            turn_sequence: sequences[index],
            is_opening_event: event.is_opening_event,
            event_kind: event.event_kind,
            data: dataOf(event)
          }))
        )
      }))

    /**
     * One page of events (spec 4.1): forward after `after_sequence`, or backward before
     * `before_sequence` (0: from the latest), which takes precedence.
     */
    const list = (agent: AgentRef, query: EventsQuery): Effect.Effect<EventsPage> =>
      Effect.gen(function*() {
        const limit = query.limit ?? DEFAULT_EVENTS_LIMIT
        if (query.before_sequence !== undefined) {
          const before = query.before_sequence
          const rows = yield* events.before(agent, before, limit + 1)
          const has_more = rows.length > limit
          const data = rows.slice(0, limit).reverse()
          return {
            data,
            next_after_sequence: data.length === 0 ? before : data[data.length - 1].sequence,
            has_more,
            next_before_sequence: has_more ? data[0].sequence : null
          }
        }
        const after = query.after_sequence ?? 0
        const rows = yield* events.after(agent, after, limit + 1)
        const data = rows.slice(0, limit)
        return {
          data,
          next_after_sequence: data.length === 0 ? after : data[data.length - 1].sequence,
          has_more: rows.length > limit,
          next_before_sequence: null
        }
      })

    /**
     * Events after `afterSequence`, waiting up to `timeout` for the first to arrive: an empty
     * array when none came in time.
     */
    const waitForEvents = (agent: AgentRef, afterSequence: number, timeout: Duration.DurationInput) =>
      Effect.scoped(Effect.gen(function*() {
        const wakeups = yield* notifications.subscribe
        const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(timeout)
        while (true) {
          const page = yield* list(agent, { after_sequence: afterSequence, limit: DEFAULT_EVENTS_LIMIT })
          const remaining = deadline - (yield* Clock.currentTimeMillis)
          if (page.data.length > 0 || remaining <= 0) return page.data
          yield* Queue.take(wakeups).pipe(
            Effect.repeat({ until: (woken) => woken === agent.id }),
            Effect.timeout(Duration.min(POLL_INTERVAL, Duration.millis(remaining))),
            Effect.ignore
          )
        }
      }))

    return { append, transaction, list, waitForEvents } as const
  }),
  dependencies: [
    AgentEventsRepository.Default,
    AgentsRepository.Default,
    IdGenerator.Default,
    Transactions.Default,
    EventNotifications.Default
  ]
}) {}
