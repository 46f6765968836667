import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A session start holds its workspace while it places a worktree on a machine
 * (docs/workspaces.md, "Sessions started at once"): `placement_id` names the session start,
 * `placement_held_until` is when the hold lapses unless it is renewed (it is while the placing
 * runs), so a hold left by a server that stopped mid-placing frees the workspace by itself. Other
 * session starts of the workspace wait for the hold to end, then place (or reuse) the worktree
 * themselves, so git on the machine never makes one worktree twice at once, and the worktree's row
 * is inserted once.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE workspaces ADD COLUMN placement_id text`
  yield* sql`ALTER TABLE workspaces ADD COLUMN placement_held_until timestamptz`
  yield* sql`ALTER TABLE workspaces ADD CONSTRAINT workspaces_placement_hold
    CHECK ((placement_id IS NULL) = (placement_held_until IS NULL))`
})
