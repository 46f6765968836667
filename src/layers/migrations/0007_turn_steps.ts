import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The runtime's durability records (docs/runtime.md): one `turn_steps` row per completed model
 * call of a turn, written in the same transaction as the events that call produced, so a model
 * call whose output is recorded is never made again after a crash; and the disposition an input
 * was first answered with, so a repeated idempotent input gets the first answer again.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE turn_steps (
      turn_id text NOT NULL REFERENCES turns ON DELETE CASCADE,
      step integer NOT NULL CHECK (step >= 1),
      outcome jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (turn_id, step)
    )`
  yield* sql`
    ALTER TABLE agent_inputs
    ADD COLUMN disposition text NOT NULL DEFAULT 'queued' CHECK (disposition IN ('started', 'queued'))`
})
