import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Workspaces (docs/workspaces.md): a person's workspace on a repository in one project; its
 * worktrees (the main one made with it); the sessions started in it (each one an agent of the
 * project); the checkpoints its worktrees were packed into (content-addressed bytes).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE workspaces (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      name text NOT NULL,
      repository_url text,
      base_ref text,
      default_machine_id text REFERENCES machines (id) ON DELETE SET NULL,
      machine_pool_id text REFERENCES machine_pools (id) ON DELETE SET NULL,
      sync_enabled boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX workspaces_user ON workspaces (user_id, id)`
  yield* sql`
    CREATE TABLE checkpoints (
      id text NOT NULL,
      workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      content bytea NOT NULL,
      size integer NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`
    CREATE TABLE worktrees (
      id text PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      is_main boolean NOT NULL,
      name text,
      path text,
      worktree_type text CHECK (worktree_type IN ('LOCAL', 'REMOTE')),
      user_machine_path_id text,
      machine_id text REFERENCES machines (id) ON DELETE SET NULL,
      managed_machine_id text REFERENCES machines (id) ON DELETE SET NULL,
      last_heartbeat_at timestamptz,
      last_synced_checkpoint_id text,
      checkpoint_restore_pending boolean NOT NULL DEFAULT false,
      current_checkpoint_id text,
      checkpoint_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (is_main = (name IS NULL))
    )`
  yield* sql`CREATE UNIQUE INDEX worktrees_main ON worktrees (workspace_id) WHERE is_main`
  yield* sql`CREATE UNIQUE INDEX worktrees_name ON worktrees (workspace_id, name) WHERE name IS NOT NULL`
  yield* sql`
    CREATE TABLE workspace_sessions (
      id text PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      worktree_id text NOT NULL REFERENCES worktrees (id) ON DELETE CASCADE,
      machine_id text NOT NULL,
      agent_id text NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      agent_config_id text NOT NULL,
      resume_session_id text,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX workspace_sessions_worktree ON workspace_sessions (worktree_id)`
})
