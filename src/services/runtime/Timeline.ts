/**
 * The agent timeline: append events with gapless per-agent sequences, read them in pages
 * (spec 4.1), and wait for new ones (for streaming).
 *
 * `append` locks the agent row (`UPDATE agents SET last_sequence = ...`), so sequences are
 * allocated in the same transaction as the insert and concurrent appends to one agent serialize.
 * Called inside a caller's transaction, it joins it: the events become visible when that commits.
 *
 * Waiting: appends in this process wake waiters once the events are visible, that is when the
 * transaction they belong to commits (a transaction that appends events is opened with
 * `transaction`, which wakes the waiters after its commit: a waiter woken earlier would read on
 * another connection before the commit, find nothing and sleep until its next poll); appends by
 * another process sharing the database wake them through EventNotifications (Postgres NOTIFY,
 * sent by the append's statement when its transaction commits). A waiter also reads every
 * POLL_INTERVAL, a safety net only (docs/scale-out.md).
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, FiberRef, Queue } from "effect"
import { NotFound } from "../../domain/shared/Errors.ts"
import { type AgentId, type AgentConfigId, EventId, type OrgId, type ProjectId } from "../../domain/shared/Ids.ts"
import {
  type AgentEvent,
  DEFAULT_EVENTS_LIMIT,
  type EventsPage,
  type EventsQuery,
  type NewEvent
} from "../../domain/runtime/Events.ts"
import { EventNotifications } from "./EventNotifications.ts"

export const POLL_INTERVAL = Duration.seconds(5)

interface EventRow {
  readonly agent_id: AgentId
  readonly org_id: OrgId
  readonly project_id: ProjectId
  readonly sequence: string | number
  readonly id: string
  readonly agent_config_id: AgentConfigId
  readonly turn_id: string | null
  readonly turn_sequence: number | null
  readonly is_opening_event: boolean
  readonly event_kind: string
  readonly data: Record<string, unknown>
  readonly created_at: Date
}

const toEvent = (row: EventRow): AgentEvent =>
  ({
    ...row.data,
    id: row.id,
    org_id: row.org_id,
    project_id: row.project_id,
    agent_id: row.agent_id,
    agent_config_id: row.agent_config_id,
    turn_id: row.turn_id,
    turn_sequence: row.turn_sequence,
    is_opening_event: row.is_opening_event,
    sequence: Number(row.sequence),
    event_kind: row.event_kind,
    created_at: row.created_at
  }) as AgentEvent

/** The kind-specific fields of an event, stored as JSON. */
const dataOf = (event: NewEvent): Record<string, unknown> => {
  const { event_kind: _, is_opening_event: __, turn_id: ___, ...data } = event
  return data
}

export class Timeline extends Effect.Service<Timeline>()("Timeline", {
  scoped: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const notifications = yield* EventNotifications
    /** The agents whose events the current `transaction` appended, woken when it commits. */
    const uncommittedAppends = yield* FiberRef.make<Set<AgentId> | undefined>(undefined)

    const wake = (agentId: AgentId) =>
      Effect.flatMap(FiberRef.get(uncommittedAppends), (pending) => {
        if (pending === undefined) return notifications.wake([agentId])
        pending.add(agentId)
        return Effect.void
      })

    /** `sql.withTransaction` for a transaction that appends events: their waiters are woken once it commits. */
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(FiberRef.get(uncommittedAppends), (outer) => {
        if (outer !== undefined) return sql.withTransaction(effect)
        const pending = new Set<AgentId>()
        return sql.withTransaction(Effect.locally(effect, uncommittedAppends, pending)).pipe(
          Effect.tap(() => notifications.wake(pending))
        )
      })

    const append = (agentId: AgentId, events: ReadonlyArray<NewEvent>) =>
      sql.withTransaction(Effect.gen(function*() {
        const [agent] = yield* sql<{ last_sequence: string; agent_config_id: AgentConfigId; org_id: OrgId; project_id: ProjectId }>`
          UPDATE agents SET last_sequence = last_sequence + ${events.length}, updated_at = now()
          WHERE id = ${agentId}
          RETURNING last_sequence, agent_config_id, org_id, project_id${notifications.notifyOnCommit(agentId)}`
        if (agent === undefined) return yield* Effect.die(new NotFound({ error: `Agent ${agentId} not found` }))
        const first = Number(agent.last_sequence) - events.length + 1

        const turnIds = [...new Set(events.flatMap((event) => event.turn_id === null ? [] : [event.turn_id]))]
        const lastTurnSequence = new Map<string, number>()
        if (turnIds.length > 0) {
          const rows = yield* sql<{ turn_id: string; last: number }>`
            SELECT turn_id, max(turn_sequence) AS last FROM agent_events
            WHERE agent_id = ${agentId} AND ${sql.in("turn_id", turnIds)}
            GROUP BY turn_id`
          for (const row of rows) lastTurnSequence.set(row.turn_id, Number(row.last))
        }
        const rows = events.map((event, index) => {
          let turnSequence: number | null = null
          if (event.turn_id !== null) {
            turnSequence = (lastTurnSequence.get(event.turn_id) ?? -1) + 1
            lastTurnSequence.set(event.turn_id, turnSequence)
          }
          return {
            agent_id: agentId,
            sequence: first + index,
            id: EventId.make(),
            agent_config_id: agent.agent_config_id,
            turn_id: event.turn_id,
            turn_sequence: turnSequence,
            is_opening_event: event.is_opening_event,
            event_kind: event.event_kind,
            data: sql.json(dataOf(event))
          }
        })
        const inserted = yield* sql<EventRow>`
          INSERT INTO agent_events ${sql.insert(rows)}
          RETURNING agent_id, sequence, id, agent_config_id, turn_id, turn_sequence, is_opening_event,
            event_kind, data, created_at,
            ${agent.org_id}::text AS org_id, ${agent.project_id}::text AS project_id`
        return inserted.map(toEvent)
      })).pipe(
        Effect.orDie,
        Effect.tap(() => wake(agentId))
      )

    /** One page of events (spec 4.1): forward after `after_sequence`, or backward before `before_sequence` (0: from the latest), which takes precedence. */
    const list = (agentId: AgentId, query: EventsQuery): Effect.Effect<EventsPage> =>
      Effect.gen(function*() {
        const limit = query.limit ?? DEFAULT_EVENTS_LIMIT
        const select = sql`
          SELECT e.agent_id, e.sequence, e.id, e.agent_config_id, e.turn_id, e.turn_sequence, e.is_opening_event,
            e.event_kind, e.data, e.created_at, a.org_id, a.project_id
          FROM agent_events e JOIN agents a ON a.id = e.agent_id
          WHERE e.agent_id = ${agentId}`
        if (query.before_sequence !== undefined) {
          const before = query.before_sequence
          const rows = yield* sql<EventRow>`
            ${select} ${before === 0 ? sql`` : sql`AND e.sequence < ${before}`}
            ORDER BY e.sequence DESC LIMIT ${limit + 1}`
          const has_more = rows.length > limit
          const data = rows.slice(0, limit).reverse().map(toEvent)
          return {
            data,
            next_after_sequence: data.length === 0 ? before : data[data.length - 1].sequence,
            has_more,
            next_before_sequence: has_more ? data[0].sequence : null
          }
        }
        const after = query.after_sequence ?? 0
        const rows = yield* sql<EventRow>`
          ${select} AND e.sequence > ${after}
          ORDER BY e.sequence LIMIT ${limit + 1}`
        const data = rows.slice(0, limit).map(toEvent)
        return {
          data,
          next_after_sequence: data.length === 0 ? after : data[data.length - 1].sequence,
          has_more: rows.length > limit,
          next_before_sequence: null
        }
      }).pipe(Effect.orDie)

    /**
     * Events after `afterSequence`, waiting up to `timeout` for the first to arrive: an empty
     * array when none came in time.
     */
    const waitForEvents = (agentId: AgentId, afterSequence: number, timeout: Duration.DurationInput) =>
      Effect.scoped(Effect.gen(function*() {
        const wakeups = yield* notifications.subscribe
        const deadline = Date.now() + Duration.toMillis(timeout)
        while (true) {
          const page = yield* list(agentId, { after_sequence: afterSequence, limit: DEFAULT_EVENTS_LIMIT })
          const remaining = deadline - Date.now()
          if (page.data.length > 0 || remaining <= 0) return page.data
          yield* Queue.take(wakeups).pipe(
            Effect.repeat({ until: (woken) => woken === agentId }),
            Effect.timeout(Duration.min(POLL_INTERVAL, Duration.millis(remaining))),
            Effect.ignore
          )
        }
      }))

    return { append, transaction, list, waitForEvents } as const
  })
}) {}
