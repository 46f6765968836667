import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A migration holds its worktree (docs/workspaces.md, "Migration"): `migration_id` names the
 * migration, `migration_held_until` is when the hold lapses unless the migration renews it (it
 * does while it runs), so a hold left by a server that stopped mid-migration frees the worktree
 * by itself. While held, another migration, a new session and an input to an agent of the
 * worktree's sessions are refused; the index finds the sessions of an agent for that check.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE worktrees ADD COLUMN migration_id text`
  yield* sql`ALTER TABLE worktrees ADD COLUMN migration_held_until timestamptz`
  yield* sql`ALTER TABLE worktrees ADD CONSTRAINT worktrees_migration_hold
    CHECK ((migration_id IS NULL) = (migration_held_until IS NULL))`
  yield* sql`CREATE INDEX workspace_sessions_agent ON workspace_sessions (agent_id)`
})
