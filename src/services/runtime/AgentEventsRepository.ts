/**
 * The `agent_events` table: the timeline, one row per event, its kind-specific fields in `data`.
 * Rows carry no organization or project: the agent's are given by the caller, which has the agent.
 * Pages are read decoded into events (the domain's reads) or as the JSON text of each event,
 * written by Postgres (the API's pages, sent as read).
 *
 * `append` takes the agent's next sequences in the statement that inserts the events: it advances
 * `agents.last_sequence` and, when the append starts or ends a turn, sets the agent's `status` and
 * `current_turn_id` (the one write of this repository to another table: the counter is the
 * timeline's, and the state changes with the events that record it), so an append is one
 * statement. Other writes that go with an append may be made by its statement too (`AppendPrelude`),
 * which then begins with them, and may append only when they found what they looked for.
 */
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Context, Effect, Layer, Schema, SchemaTransformation } from "effect"
import { AgentId, EventId, OrgId, ProjectId, TurnId } from "../../domain/shared/Ids.ts"
import { AgentStatus } from "../../domain/runtime/Agents.ts"
import { AgentEvent, type NewEvent } from "../../domain/runtime/Events.ts"
import { PipelinedStatements } from "../shared/PipelinedStatements.ts"
import { orWhenLocked, SqlFragment } from "../shared/Sql.ts"

/** The event fields kept in columns; the others are the event's `data`. */
const COLUMNS = [
  "id",
  "agent_id",
  "agent_config_id",
  "turn_id",
  "turn_sequence",
  "is_opening_event",
  "sequence",
  "event_kind",
  "created_at",
  "org_id",
  "project_id"
] as const

const COLUMN_SET: ReadonlySet<string> = new Set(COLUMNS)

/**
 * The event's fields split into its columns and its `data`. Plain loops: an object rest pattern
 * (`{ data, ...columns }`) costs V8 about 5 µs an object, a tenth of a page read of 500 events.
 */
const splitData = (event: Readonly<Record<string, unknown>>) => {
  const data: Record<string, unknown> = {}
  const columns: Record<string, unknown> = {}
  for (const key in event) (COLUMN_SET.has(key) ? columns : data)[key] = event[key]
  return { data, columns }
}

/**
 * The event a row holds: its columns (in the order they were selected), then its `data`'s
 * fields. The event's schema checks the result, every field of it, so the row itself is not
 * checked first.
 */
const joinData = (row: object) => {
  const columns = row as Readonly<Record<string, unknown>>
  const data = columns.data as Readonly<Record<string, unknown>>
  const event: Record<string, unknown> = {}
  for (const key in columns) if (key !== "data") event[key] = columns[key]
  for (const key in data) if (!COLUMN_SET.has(key)) event[key] = data[key]
  return event
}

/** A row as it arrives: the event's columns and its `data` (joinData). */
const EventRow = Schema.ObjectKeyword

const rowOf = (event: Readonly<Record<string, unknown>>) => {
  const { columns, data } = splitData(event)
  return { ...columns, data }
}

/** A row decoded into the event. */
const EventFromRow = EventRow.pipe(Schema.decodeTo(
  AgentEvent,
  SchemaTransformation.transform<typeof AgentEvent.Encoded, object>({
    // The event's schema checks what joinData puts together (v3's `strict: false`), so it is typed as the event's encoding.
    decode: (row) => joinData(row) as typeof AgentEvent.Encoded,
    encode: rowOf
  })
))

/**
 * An event as the API sends it, written by Postgres: its JSON text (`json`), and its sequence for
 * paging. A page of them is sent as it is read, without parsing a row, decoding an event or
 * encoding it back (docs/performance-record.md).
 */
const EventJson = Schema.Struct({ sequence: Schema.Number, json: Schema.String })

/** The agent whose events are read: its id, and the organization and project its events name. */
export interface AgentRef {
  readonly id: AgentId
  readonly org_id: OrgId
  readonly project_id: ProjectId
}

const AgentFields = { agentId: AgentId, orgId: OrgId, projectId: ProjectId }

/** Pages of an agent's timeline, its events as `Event`. */
export interface EventReads<Event> {
  /** At most `limit` events after `sequence`, oldest first. */
  readonly after: (agent: AgentRef, sequence: number, limit: number) => Effect.Effect<ReadonlyArray<Event>>
  /** At most `limit` events before `sequence` (0: from the latest), newest first. */
  readonly before: (agent: AgentRef, sequence: number, limit: number) => Effect.Effect<ReadonlyArray<Event>>
}

/**
 * New rows. `position` is the event's place among the new events (1, 2, ...): its sequence is the
 * agent's last one before the append plus its position. A turn's event is numbered within its
 * turn by the insert itself: `turn_offset` is its place among the new events of its turn
 * (1, 2, ...), added to the turn's last `turn_sequence` (-1 for a new turn, so its opening event
 * is 0). That last one is looked up by the turn alone (a turn id is unique): with the agent's id
 * in the condition too, Postgres could AND the turn's index with the agent's whole range of the
 * primary key, a read that grows with the agent's past (docs/performance-record.md).
 */
const EventRows = Schema.Array(Schema.Struct({
  position: Schema.Int,
  id: EventId,
  turn_id: Schema.NullOr(TurnId),
  turn_offset: Schema.NullOr(Schema.Int),
  is_opening_event: Schema.Boolean,
  event_kind: Schema.String,
  data: Schema.Record(Schema.String, Schema.Unknown)
}))

/** The agent's status and current turn, when an append changes them (set by the statement that appends). */
export const AgentTurnState = Schema.Struct({ status: AgentStatus, current_turn_id: Schema.NullOr(TurnId) })
export type AgentTurnState = typeof AgentTurnState.Type

/** A Postgres notification to send with an append: its payload is `prefix`, a space, and the agent's last sequence. */
const Notice = Schema.Struct({ channel: Schema.String, prefix: Schema.String })
export type Notice = typeof Notice.Type

/**
 * The writes an append's statement makes before it: `with`, the common table expressions the
 * statement begins with (each `name AS (statement)`, named by the repository of its table), and
 * the `guard` the append waits on, if any.
 */
export interface AppendPrelude {
  readonly with: ReadonlyArray<Statement.Fragment>
  readonly guard: PreludeGuard | null
}

/**
 * `name`, one of the prelude's common table expressions: the append happens only when it holds a
 * row (when it holds none, nothing is appended and the agent is not changed). With `turnUsage`,
 * that row has a `usage` (a JSON object) which a new `turn` event records: the turn's token usage
 * as the prelude's writes left it. With `agentStatus`, that row has a `status` which the agent
 * takes (its current turn unchanged): the status the prelude's writes gave its turn.
 */
export interface PreludeGuard {
  readonly name: string
  readonly turnUsage: boolean
  readonly agentStatus?: boolean
}

/** The kind-specific fields of a new event: what goes in `data`. */
export const dataOf = (event: NewEvent): Record<string, unknown> => splitData(event).data

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pipelined = yield* PipelinedStatements
  // `created_at` in RFC 3339 with milliseconds, as the event's encoding writes it.
  const createdAt = sql`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

  // The columns in the order of the event's fields, then `data`.
  const selectRows = (orgId: string, projectId: string) =>
    sql`SELECT id, ${orgId}::text AS org_id, ${projectId}::text AS project_id, agent_id, agent_config_id, turn_id,
      turn_sequence, is_opening_event, sequence, ${createdAt} AS created_at, event_kind, data
      FROM agent_events`

  // The event's JSON as the API sends it, put together as text (json_build_object costs Postgres
  // about twice as much): the columns in the order of the event's fields, then the fields of
  // `data` (its text without the opening brace; an append never puts a column's key in it, see
  // splitData). The columns' strings need no escaping: ids the server made and checked (their
  // patterns allow lower-case letters, digits and `_`; the organization's and the project's are
  // checked again by the read's request schema), an event kind, `created_at` as formatted.
  const selectJson = (orgId: string, projectId: string) =>
    sql`SELECT sequence, '{"id":"' || id || '","org_id":"' || ${orgId}::text || '","project_id":"' || ${projectId}::text
        || '","agent_id":"' || agent_id || '","agent_config_id":"' || agent_config_id
        || '","turn_id":' || COALESCE('"' || turn_id || '"', 'null')
        || ',"turn_sequence":' || COALESCE(turn_sequence::text, 'null')
        || ',"is_opening_event":' || is_opening_event::text || ',"sequence":' || sequence::text
        || ',"created_at":"' || ${createdAt} || '","event_kind":"' || event_kind || '"'
        || CASE WHEN data = '{}'::jsonb THEN '}' ELSE ',' || substr(data::text, 2) END AS json
      FROM agent_events`

  const append = SqlSchema.findAll({
    Request: Schema.Struct({
      agentId: AgentId,
      rows: EventRows,
      state: Schema.NullOr(AgentTurnState),
      notice: Schema.NullOr(Notice),
      prelude: Schema.NullOr(Schema.Struct({
        with: Schema.Array(SqlFragment),
        guard: Schema.NullOr(Schema.Struct({
          name: Schema.String,
          turnUsage: Schema.Boolean,
          agentStatus: Schema.optional(Schema.Boolean)
        }))
      }))
    }),
    Result: EventFromRow,
    execute: ({ agentId, notice, prelude, rows, state }) => {
      const guard = prelude?.guard ?? null
      const statement = (client: SqlClient.SqlClient) => Effect.map(
        client<{ readonly sequence: number }>`
          WITH ${prelude === null ? sql`` : sql`${sql.csv(prelude.with)},`} allocated AS (
            UPDATE agents SET last_sequence = agents.last_sequence + ${rows.length}, updated_at = now()
            ${state === null ? sql`` : sql`, status = ${state.status}, current_turn_id = ${state.current_turn_id}`}
            ${guard?.agentStatus === true ? sql`, status = ${sql(guard.name)}.status` : sql``}
            ${guard === null ? sql`` : sql`FROM ${sql(guard.name)}`}
            WHERE agents.id = ${agentId}
            RETURNING agents.last_sequence - ${rows.length} AS before, agents.last_sequence, agents.agent_config_id,
              agents.org_id, agents.project_id ${guard?.turnUsage === true ? sql`, ${sql(guard.name)}.usage` : sql``}
          ), inserted AS (
          INSERT INTO agent_events
            (agent_id, sequence, id, agent_config_id, turn_id, turn_sequence, is_opening_event, event_kind, data)
          SELECT ${agentId}, allocated.before + r.position, r.id, allocated.agent_config_id, r.turn_id,
            CASE WHEN r.turn_id IS NULL THEN NULL ELSE r.turn_offset + COALESCE(
              (SELECT max(e.turn_sequence) FROM agent_events e WHERE e.turn_id = r.turn_id),
              -1
            ) END,
            r.is_opening_event, r.event_kind,
            ${
          guard?.turnUsage === true
            ? sql`CASE WHEN r.event_kind = 'turn' THEN jsonb_set(r.data, '{usage}', allocated.usage) ELSE r.data END`
            : sql`r.data`
        }
          FROM allocated, jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(
            position bigint, id text, turn_id text, turn_offset integer,
            is_opening_event boolean, event_kind text, data jsonb
          )
          RETURNING *)
          SELECT inserted.*, allocated.org_id, allocated.project_id FROM inserted, allocated
          ${
          notice === null
            ? sql``
            : sql`CROSS JOIN (SELECT pg_notify(${notice.channel}, ${notice.prefix} || ' ' || last_sequence) FROM allocated) AS notified`
        }`,
        (inserted) => [...inserted].sort((a, b) => a.sequence - b.sequence)
      )
      // A guarded append is one statement that commits alone: pipelined, and nothing appended when
      // its agent is locked by a transaction (its lock's NOWAIT), as when its guard does not hold.
      return guard === null ? statement(sql) : orWhenLocked(pipelined.run(statement), () => [])
    }
  })

  const ref = (agent: AgentRef) => ({ agentId: agent.id, orgId: agent.org_id, projectId: agent.project_id })

  /** Reads of the timeline, the rows `select` makes, each decoded with `Result`. */
  const reads = <Event>(
    select: (orgId: string, projectId: string) => Statement.Fragment,
    Result: Schema.Decoder<Event>
  ): EventReads<Event> => {
    const after = SqlSchema.findAll({
      Request: Schema.Struct({ ...AgentFields, after: Schema.Int, limit: Schema.Int }),
      Result,
      execute: ({ after, agentId, limit, orgId, projectId }) => sql`
        ${select(orgId, projectId)} WHERE agent_id = ${agentId} AND sequence > ${after}
        ORDER BY sequence LIMIT ${limit}`
    })
    const before = SqlSchema.findAll({
      Request: Schema.Struct({ ...AgentFields, before: Schema.Int, limit: Schema.Int }),
      Result,
      execute: ({ agentId, before, limit, orgId, projectId }) => sql`
        ${select(orgId, projectId)} WHERE agent_id = ${agentId} ${before === 0 ? sql`` : sql`AND sequence < ${before}`}
        ORDER BY sequence DESC LIMIT ${limit}`
    })
    return {
      after: (agent, sequence, limit) => Effect.orDie(after({ ...ref(agent), after: sequence, limit })),
      before: (agent, sequence, limit) => Effect.orDie(before({ ...ref(agent), before: sequence, limit }))
    }
  }

  return {
    /**
     * Appends the rows after the agent's last sequence, which it advances (locking the agent's
     * row); with a state, sets the agent's status and current turn too; with a notice, sends
     * it (`pg_notify`, delivered when the transaction commits); with a prelude, after its writes,
     * and when it has a guard only if the guard holds (AppendPrelude). Nothing when the agent does
     * not exist or the guard did not hold. An append with a guard is a statement of its own,
     * never in a transaction: it runs pipelined (PipelinedStatements), and its guard locks the
     * agent NOWAIT (AgentsRepository.lockUnchanged, lockTimelineUnchanged), so that it never waits
     * for a lock there: an agent locked by a transaction appends nothing, as a guard that did not
     * hold.
     */
    append: (
      agentId: AgentId,
      rows: typeof EventRows.Type,
      state: AgentTurnState | null,
      notice: Notice | null,
      prelude: AppendPrelude | null = null
    ) => Effect.orDie(append({ agentId, rows, state, notice, prelude })),
    /** The events as the domain has them. */
    decoded: reads(selectRows, EventFromRow),
    /** The events as the API sends them: their JSON text. */
    json: reads(selectJson, EventJson)
  } as const
})

export class AgentEventsRepository extends Context.Service<AgentEventsRepository, Effect.Success<typeof make>>()("AgentEventsRepository") {
  static readonly layer = Layer.effect(this, make)
}
