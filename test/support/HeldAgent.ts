/**
 * Another process's writes to an agent, in a transaction that holds the agent's row: how the
 * tests of the server's one-statement writes (a turn's end, a step's tool calls, a tool's result,
 * an input) make something be in their way.
 */
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { PIPELINED_APPLICATION_NAME } from "../../src/layers/Database.ts"
import { eventually } from "./Polling.ts"

/** A new event id, as the server makes them: `evt_` and 26 characters of [a-z2-7]. */
const newEventId = () => `evt_${Array.from(randomBytes(26), (byte) => "abcdefghijklmnopqrstuvwxyz234567"[byte % 32]).join("")}`

/**
 * Another process's append of one event to the agent (of its turn, or of none), in the caller's
 * transaction, which holds the agent's row.
 */
export const appendElsewhere = (
  sql: SqlClient.SqlClient,
  agentId: string,
  turnId: string | null,
  kind: string,
  data: Record<string, unknown>
) =>
  Effect.andThen(
    sql`
      INSERT INTO agent_events (agent_id, sequence, id, agent_config_id, turn_id, turn_sequence, is_opening_event, event_kind, data)
      SELECT id, last_sequence + 1, ${newEventId()}, agent_config_id, ${turnId},
        (SELECT max(turn_sequence) + 1 FROM agent_events WHERE turn_id = ${turnId}), false, ${kind}, ${JSON.stringify(data)}::jsonb
      FROM agents WHERE id = ${agentId}`,
    sql`UPDATE agents SET last_sequence = last_sequence + 1 WHERE id = ${agentId}`
  )

/**
 * Drops this session's snapshot of pg_stat_activity: a transaction reads the view as it was at
 * its first read (stats_fetch_consistency), so a poll inside one would see nothing change.
 */
const clearedActivity = (sql: SqlClient.SqlClient) => sql`SELECT pg_stat_clear_snapshot()`

/**
 * Waits until a statement of another session waits for a lock this session (a transaction's)
 * holds. That statement is never a pipelined one: a statement that runs there (a guarded append)
 * locks its agent NOWAIT and takes the transaction's way on the main pool when the agent is held
 * (PipelinedStatements), so that the reads and appends pipelined behind it never wait for a lock.
 */
export const waitedOn = (sql: SqlClient.SqlClient, what: string) =>
  Effect.map(
    eventually(
      Effect.andThen(
        clearedActivity(sql),
        sql<{ readonly session: string }>`
          SELECT activity.application_name AS session
          FROM pg_locks JOIN pg_stat_activity AS activity ON activity.pid = pg_locks.pid
          WHERE NOT pg_locks.granted AND pg_backend_pid() = ANY(pg_blocking_pids(pg_locks.pid))`
      ),
      (rows) => rows.length === 1,
      what
    ),
    (rows) => expect(rows[0].session).not.toBe(PIPELINED_APPLICATION_NAME)
  )

/**
 * Waits until `count` statements on this database wait for a lock, whoever holds it: the last of
 * them (`what`) may wait for a lock of a session that itself waits for this one's.
 */
export const lockWaits = (sql: SqlClient.SqlClient, count: number, what: string, timeout?: `${number} seconds`) =>
  eventually(
    Effect.andThen(
      clearedActivity(sql),
      sql<{ readonly waiting: number }>`
        SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`
    ),
    ([row]) => row.waiting === count,
    what,
    timeout
  )

/**
 * Waits until at least `count` statements on this database whose text is like `pattern` (SQL
 * LIKE, e.g. `INSERT INTO workspace_sessions%`) wait for a lock: unlike `lockWaits`'s exact count,
 * a statement of the server's background work that happens to wait meanwhile does not hold it up.
 */
export const statementWaits = (
  sql: SqlClient.SqlClient,
  pattern: string,
  count: number,
  what: string,
  timeout?: `${number} seconds`
) =>
  eventually(
    Effect.andThen(
      clearedActivity(sql),
      sql<{ readonly waiting: number }>`
        SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ${pattern}`
    ),
    ([row]) => row.waiting >= count,
    what,
    timeout
  )

/**
 * Another process's append of a `model_output` to the turn, in a transaction that holds the
 * agent's row until a statement of this process waits for it (`what`), then commits.
 */
export const appendHoldingAgent = (sql: SqlClient.SqlClient, agentId: string, turnId: string, what: string) =>
  sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT id FROM agents WHERE id = ${agentId} FOR UPDATE`
    yield* appendElsewhere(sql, agentId, turnId, "model_output", {
      content_blocks: [{ type: "text", text: "from another process" }]
    })
    yield* waitedOn(sql, what)
  }))
