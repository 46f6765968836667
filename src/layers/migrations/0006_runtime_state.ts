import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE actors (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
      external_id text NOT NULL,
      display_name text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX actors_project_external_key ON actors (project_id, external_id)`
  yield* sql`
    CREATE TABLE agent_inputs (
      id text PRIMARY KEY,
      agent_id text NOT NULL REFERENCES agents ON DELETE CASCADE,
      turn_id text NOT NULL UNIQUE,
      event_sequence bigint NOT NULL,
      status text NOT NULL CHECK (status IN ('queued', 'started', 'withdrawn')),
      content_blocks jsonb NOT NULL,
      actor_id text REFERENCES actors,
      idempotency_key text,
      request_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX agent_inputs_idempotency_key ON agent_inputs (agent_id, idempotency_key) WHERE idempotency_key IS NOT NULL`
  yield* sql`CREATE INDEX agent_inputs_backlog_idx ON agent_inputs (agent_id, id) WHERE status = 'queued'`
  yield* sql`
    CREATE TABLE turns (
      id text PRIMARY KEY,
      agent_id text NOT NULL REFERENCES agents ON DELETE CASCADE,
      input_id text NOT NULL REFERENCES agent_inputs,
      status text NOT NULL CHECK (status IN ('running', 'waiting', 'completed', 'failed', 'cancelled')),
      error text,
      model_calls integer NOT NULL DEFAULT 0,
      input_tokens bigint NOT NULL DEFAULT 0,
      output_tokens bigint NOT NULL DEFAULT 0,
      cache_read_tokens bigint NOT NULL DEFAULT 0,
      cache_write_tokens bigint NOT NULL DEFAULT 0,
      started_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz
    )`
  yield* sql`CREATE INDEX turns_agent_idx ON turns (agent_id, id)`
  yield* sql`CREATE INDEX turns_unfinished_idx ON turns (status) WHERE status IN ('running', 'waiting')`
  yield* sql`
    CREATE TABLE artifacts (
      id text PRIMARY KEY,
      agent_id text NOT NULL REFERENCES agents ON DELETE CASCADE,
      media_type text NOT NULL,
      size_bytes bigint NOT NULL,
      sha256 text NOT NULL,
      bytes bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE tool_calls (
      id text PRIMARY KEY,
      agent_id text NOT NULL REFERENCES agents ON DELETE CASCADE,
      turn_id text NOT NULL REFERENCES turns,
      provider_call_id text NOT NULL,
      name text NOT NULL,
      input jsonb NOT NULL,
      type text NOT NULL CHECK (type IN ('built_in', 'custom')),
      state text NOT NULL CHECK (state IN ('awaiting_authorization', 'ready', 'running', 'completed', 'cancelled')),
      outcome text CHECK (outcome IN ('succeeded', 'failed')),
      deferred_token text,
      result_event_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX tool_calls_turn_provider_key ON tool_calls (turn_id, provider_call_id)`
  yield* sql`CREATE INDEX tool_calls_agent_idx ON tool_calls (agent_id, id)`
  yield* sql`
    CREATE TABLE interactions (
      id text PRIMARY KEY,
      agent_id text NOT NULL REFERENCES agents ON DELETE CASCADE,
      project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
      turn_id text NOT NULL REFERENCES turns,
      tool_call_id text REFERENCES tool_calls,
      kind text NOT NULL CHECK (kind IN ('approval', 'question')),
      status text NOT NULL CHECK (status IN ('pending', 'resolved', 'closed')),
      question text,
      decision text CHECK (decision IN ('approve', 'deny')),
      answer text,
      message text,
      deferred_token text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      resolved_at timestamptz
    )`
  yield* sql`CREATE INDEX interactions_project_pending_idx ON interactions (project_id, id) WHERE status = 'pending'`
  yield* sql`CREATE INDEX interactions_agent_idx ON interactions (agent_id, id)`
})
