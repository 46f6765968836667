/**
 * The agent timeline: append events with gapless per-agent sequences, read them in pages
 * (spec 4.1), and wait for new ones (for streaming).
 *
 * `append` takes the agent's next sequences in the statement that inserts the events
 * (`AgentEventsRepository.append`, which advances the agent row's last sequence and so locks it),
 * so concurrent appends to one agent serialize. Called inside a caller's transaction, it joins
 * it: the events become visible when that commits.
 *
 * Waiting: every append belongs to a `transaction` (its own, or the caller's it joins; a
 * guarded append is a statement of its own), which wakes this process's waiters once it commits
 * (a waiter woken earlier would read on another connection before the commit), handing them the
 * events it committed; the statement inserting the events tells the other processes sharing the
 * database (a Postgres NOTIFY, delivered at the commit; EventNotifications, which also wakes the
 * waiters of an agent whose timeline it finds went further than it was told, a safety net;
 * docs/scale-out.md, docs/performance-record.md). Observers
 * (`observeCommits`) are told of the committed events too: TurnHistory folds them into the views
 * it keeps.
 */
import { Clock, Context, Duration, Effect, Layer, Option, type Scope } from "effect"
import type { Statement } from "effect/sql"
import { type AgentId, EventId } from "../../domain/shared/Ids.ts"
import { type AgentEvent, DEFAULT_EVENTS_LIMIT, type EventsPage, type EventsQuery, type NewEvent } from "../../domain/runtime/Events.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { Transactions } from "../shared/Transactions.ts"
import { type AgentRef, type AgentTurnState, type AppendPrelude, dataOf, AgentEventsRepository, type EventReads } from "./AgentEventsRepository.ts"
import { EventNotifications } from "./EventNotifications.ts"

/** Told of the events a transaction appended once it has committed, by agent, in sequence order. */
export type CommitObserver = (appended: ReadonlyMap<AgentId, ReadonlyArray<AgentEvent>>) => void

/** A page of events of type `Event`: the fields of `EventsPage`. */
interface Page<Event> {
  readonly data: ReadonlyArray<Event>
  readonly next_after_sequence: number
  readonly has_more: boolean
  readonly next_before_sequence: number | null
}

/** The events the current `transaction` appended, by agent, handed to the agents' waiters when it commits. */
const UncommittedAppends = Context.Reference<Map<AgentId, Array<AgentEvent>> | undefined>("Timeline/UncommittedAppends", {
  defaultValue: () => undefined
})

const make = Effect.gen(function*() {
  const events = yield* AgentEventsRepository
  const ids = yield* IdGenerator
  const transactions = yield* Transactions
  const notifications = yield* EventNotifications
  const commitObservers = new Set<CommitObserver>()

  /** The events a transaction appended, once it has committed: to the waiters, then to the observers. */
  const committed = (appended: ReadonlyMap<AgentId, ReadonlyArray<AgentEvent>>) =>
    Effect.andThen(
      notifications.wake(appended),
      Effect.sync(() => {
        for (const observer of commitObservers) observer(appended)
      })
    )

  /**
   * Calls `observer`, for the life of the scope, with the events each transaction of this
   * process appended, by agent, in sequence order, once it has committed. Two transactions of
   * one agent commit in sequence order, but their observers may be called in either order.
   */
  const observeCommits = (observer: CommitObserver): Effect.Effect<void, never, Scope.Scope> =>
    Effect.acquireRelease(
      Effect.sync(() => commitObservers.add(observer)),
      () => Effect.sync(() => commitObservers.delete(observer))
    )

  const addTo = (pending: Map<AgentId, Array<AgentEvent>>, agentId: AgentId, inserted: ReadonlyArray<AgentEvent>) => {
    const events = pending.get(agentId)
    if (events === undefined) pending.set(agentId, [...inserted])
    else events.push(...inserted)
  }

  /**
   * A transaction that appends events (or joins the one in progress, in a savepoint whose
   * appends count once it is released): this process's waiters are woken once it has committed.
   */
  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(UncommittedAppends, (outer) => {
      if (outer !== undefined) {
        const inner = new Map<AgentId, Array<AgentEvent>>()
        return transactions.transaction(Effect.provideService(effect, UncommittedAppends, inner)).pipe(
          Effect.tap(() => Effect.sync(() => inner.forEach((events, agentId) => addTo(outer, agentId, events))))
        )
      }
      const pending = new Map<AgentId, Array<AgentEvent>>()
      return transactions.transaction(Effect.provideService(effect, UncommittedAppends, pending)).pipe(
        Effect.tap(() => committed(pending))
      )
    })

  const appended = (agentId: AgentId, inserted: ReadonlyArray<AgentEvent>) =>
    Effect.flatMap(UncommittedAppends, (pending) =>
      Effect.sync(() => {
        if (pending !== undefined) addTo(pending, agentId, inserted)
      }))

  /** The place of each new event among the new events of its turn (1, 2, ...); none without a turn. */
  const turnOffsets = (newEvents: ReadonlyArray<NewEvent>) => {
    const counts = new Map<string, number>()
    return newEvents.map((event) => {
      if (event.turn_id === null) return null
      const offset = (counts.get(event.turn_id) ?? 0) + 1
      counts.set(event.turn_id, offset)
      return offset
    })
  }

  /**
   * Runs an append in the caller's transaction when there is one (no savepoint: an append
   * fails only by a defect, which rolls the whole transaction back), else in its own.
   */
  const appendTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(UncommittedAppends, (outer) => outer === undefined ? transaction(effect) : effect)

  /**
   * The statement appending the events (with their new ids), after `prelude` (given those ids);
   * none appended when its prelude's guard did not hold.
   */
  const insert = (
    agentId: AgentId,
    newEvents: ReadonlyArray<NewEvent>,
    state: AgentTurnState | undefined,
    prelude: (eventIds: ReadonlyArray<EventId>) => AppendPrelude | null
  ) =>
    Effect.gen(function*() {
      const offsets = turnOffsets(newEvents)
      const eventIds = yield* Effect.forEach(newEvents, () => ids.make(EventId))
      return yield* events.append(
        agentId,
        newEvents.map((event, index) => ({
          position: index + 1,
          id: eventIds[index],
          turn_id: event.turn_id,
          turn_offset: offsets[index],
          is_opening_event: event.is_opening_event,
          event_kind: event.event_kind,
          data: dataOf(event)
        })),
        state ?? null,
        notifications.notice(agentId),
        prelude(eventIds)
      )
    })

  /**
   * Appends the events; with `state`, the agent's status and current turn change in the same
   * statement (callers that change the state always append events: an empty append writes
   * nothing); `writes`, the common table expressions of other tables' rows that go with the
   * events, are made by that statement too (an unguarded AppendPrelude), given the new events'
   * ids in order when they name them.
   */
  const append = (
    agentId: AgentId,
    newEvents: ReadonlyArray<NewEvent>,
    state?: AgentTurnState,
    writes: ReadonlyArray<Statement.Fragment> | ((eventIds: ReadonlyArray<EventId>) => ReadonlyArray<Statement.Fragment>) = []
  ) =>
    appendTransaction(Effect.gen(function*() {
      if (newEvents.length === 0) return []
      const inserted = yield* insert(agentId, newEvents, state, (eventIds) => {
        const prelude = typeof writes === "function" ? writes(eventIds) : writes
        return prelude.length === 0 ? null : { with: prelude, guard: null }
      })
      if (inserted.length === 0) return yield* Effect.die(new Error(`Events appended to agent ${agentId}, which does not exist`))
      yield* appended(agentId, inserted)
      return inserted
    }))

  /**
   * Appends the events after the writes of a guarded prelude (given the new events' ids in order
   * when it names them), when its guard holds (AppendPrelude), with `state` as `append` does, in
   * one statement of its own: it needs no transaction, being one statement, and must not run
   * inside one (its waiters are woken once it has run). The events appended; none when the guard
   * did not hold.
   */
  const appendGuarded = (
    agentId: AgentId,
    newEvents: ReadonlyArray<NewEvent>,
    state: AgentTurnState | undefined,
    prelude: AppendPrelude | ((eventIds: ReadonlyArray<EventId>) => AppendPrelude)
  ) =>
    Effect.flatMap(UncommittedAppends, (outer) =>
      outer !== undefined
        ? Effect.die(new Error("A guarded append runs in a statement of its own, not in a transaction"))
        : Effect.tap(insert(agentId, newEvents, state, typeof prelude === "function" ? prelude : () => prelude), (inserted) =>
          inserted.length === 0 ? Effect.void : committed(new Map([[agentId, inserted]]))))

  /**
   * One page of events (spec 4.1) read with `reads`: forward after `after_sequence`, or
   * backward before `before_sequence` (0: from the latest), which takes precedence.
   */
  const pageOf = <Event extends { readonly sequence: number }>(reads: EventReads<Event>) =>
  (agent: AgentRef, query: EventsQuery): Effect.Effect<Page<Event>> =>
    Effect.gen(function*() {
      const limit = query.limit ?? DEFAULT_EVENTS_LIMIT
      if (query.before_sequence !== undefined) {
        const before = query.before_sequence
        const rows = yield* reads.before(agent, before, limit + 1)
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
      const rows = yield* reads.after(agent, after, limit + 1)
      const data = rows.slice(0, limit)
      return {
        data,
        next_after_sequence: data.length === 0 ? after : data[data.length - 1].sequence,
        has_more: rows.length > limit,
        next_before_sequence: null
      }
    })

  /** One page of events. */
  const list: (agent: AgentRef, query: EventsQuery) => Effect.Effect<EventsPage> = pageOf(events.decoded)

  /**
   * One page of events as the API sends it (`EventsPage`), as JSON text: each event's JSON as
   * Postgres wrote it, never parsed here.
   */
  const listJson = (agent: AgentRef, query: EventsQuery): Effect.Effect<string> =>
    Effect.map(pageOf(events.json)(agent, query), (page) =>
      `{"data":[${page.data.map((event) => event.json).join(",")}],` +
      `"next_after_sequence":${page.next_after_sequence},"has_more":${page.has_more},` +
      `"next_before_sequence":${page.next_before_sequence}}`)

  /**
   * Events after `afterSequence`, waiting up to `timeout` for the first to arrive: an empty
   * array when none came in time. The timeline is not read while this process knows that
   * nothing was committed after `afterSequence`, and events this process committed right after
   * it are taken from the wake-up, all of them (docs/performance-record.md); a read takes at
   * most `limit` events (no more: the stream that waits needs no `has_more`).
   */
  const waitForEvents = (agent: AgentRef, afterSequence: number, timeout: Duration.Input, limit: number) =>
    Effect.gen(function*() {
      const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(timeout)
      while (true) {
        const found = yield* Effect.scoped(Effect.gen(function*() {
          const remaining = deadline - (yield* Clock.currentTimeMillis)
          const woken = yield* notifications.nextWake(agent.id, Duration.millis(Math.max(remaining, 0)))
          if (notifications.lastKnown(agent.id) !== afterSequence) {
            const read = yield* events.decoded.after(agent, afterSequence, limit)
            if (read.length > 0) return read
          }
          if (remaining <= 0) return []
          const wake = yield* woken
          if (Option.isSome(wake) && wake.value !== undefined && wake.value[0]?.sequence === afterSequence + 1) {
            return wake.value
          }
          return undefined
        }))
        if (found !== undefined) return found
      }
    })

  return { append, appendGuarded, transaction, observeCommits, list, listJson, waitForEvents } as const
})

export class Timeline extends Context.Service<Timeline, Effect.Success<typeof make>>()("Timeline") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      AgentEventsRepository.layer,
      IdGenerator.layer,
      Transactions.layer,
      EventNotifications.layer
    ])
  )
}
