import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Machines (docs/machines.md): daemon tokens, machines (registered by a daemon, or later started
 * by a machine pool: the same row with a `machine_pool_id`), their project grants, and the
 * requests the server sends to their daemons (the mailbox every server process reads).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE daemon_tokens (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      name text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      expires_at timestamptz,
      last_used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX daemon_tokens_org_idx ON daemon_tokens (org_id, id)`
  // A personal machine belongs to a membership: removing the member deletes it.
  // `credential_id` is the daemon token or API key that registered it last (its machine tokens
  // stop working when that credential is revoked).
  yield* sql`
    CREATE TABLE machines (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      owner_user_id text,
      machine_pool_id text,
      credential_id text NOT NULL,
      name text NOT NULL,
      hostname text NOT NULL,
      platform text NOT NULL,
      architecture text NOT NULL,
      daemon_version text NOT NULL,
      directories jsonb NOT NULL DEFAULT '[]',
      metadata jsonb NOT NULL DEFAULT '{}',
      connection_id text,
      operations jsonb NOT NULL DEFAULT '[]',
      tools jsonb NOT NULL DEFAULT '[]',
      last_seen_at timestamptz NOT NULL DEFAULT now(),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (org_id, owner_user_id) REFERENCES org_members (org_id, user_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE UNIQUE INDEX machines_org_name_key ON machines (org_id, name) WHERE owner_user_id IS NULL`
  yield* sql`
    CREATE UNIQUE INDEX machines_personal_name_key ON machines (org_id, owner_user_id, name)
    WHERE owner_user_id IS NOT NULL`
  yield* sql`
    CREATE TABLE machine_grants (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      machine_id text NOT NULL REFERENCES machines ON DELETE CASCADE,
      target_project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (machine_id, target_project_id)
    )`
  yield* sql`CREATE INDEX machine_grants_project_idx ON machine_grants (target_project_id)`
  // No foreign key to machines: a request outlives its machine's deletion so that the daemon's
  // late result is acknowledged, and a tool call's request is failed, not lost.
  yield* sql`
    CREATE TABLE machine_requests (
      request_id text PRIMARY KEY,
      machine_id text NOT NULL,
      operation jsonb NOT NULL,
      secret_env jsonb NOT NULL DEFAULT '{}',
      agent_id text,
      tool_call_id text,
      state text NOT NULL CHECK (state IN ('pending', 'done')),
      cancel_requested boolean NOT NULL DEFAULT false,
      outcome jsonb,
      sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz
    )`
  yield* sql`CREATE INDEX machine_requests_pending_idx ON machine_requests (machine_id, request_id) WHERE state = 'pending'`
  yield* sql`CREATE INDEX machine_requests_tool_call_idx ON machine_requests (tool_call_id) WHERE tool_call_id IS NOT NULL`
})
