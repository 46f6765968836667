import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agents (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
      agent_config_id text NOT NULL REFERENCES agent_configs,
      name text,
      metadata jsonb NOT NULL DEFAULT '{}',
      status text NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'running', 'waiting')),
      current_turn_id text,
      last_sequence bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX agents_project_idx ON agents (project_id, id)`
  yield* sql`
    CREATE TABLE agent_events (
      agent_id text NOT NULL REFERENCES agents ON DELETE CASCADE,
      sequence bigint NOT NULL,
      id text NOT NULL UNIQUE,
      agent_config_id text NOT NULL,
      turn_id text,
      turn_sequence integer,
      is_opening_event boolean NOT NULL DEFAULT false,
      event_kind text NOT NULL,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (agent_id, sequence)
    )`
  yield* sql`CREATE INDEX agent_events_turn_idx ON agent_events (turn_id, turn_sequence) WHERE turn_id IS NOT NULL`
})
