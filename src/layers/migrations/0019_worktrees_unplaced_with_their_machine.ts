import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A LOCAL worktree is on a user's machine; when that machine is deleted (by its route, or with
 * its owner's membership), the worktree is on no machine: its type becomes null and its path is
 * cleared, as for a worktree never placed (docs/workspaces.md), instead of a LOCAL worktree that
 * says on no machine where it is. The next session places it again, or a migration moves it from
 * its current checkpoint. Worktrees left so before this migration are mended the same way.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION unplace_worktrees_of_deleted_machine() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE worktrees SET worktree_type = NULL, path = NULL, updated_at = now()
      WHERE machine_id = OLD.id AND worktree_type = 'LOCAL';
      RETURN OLD;
    END $$`
  yield* sql`
    CREATE TRIGGER machines_unplace_worktrees BEFORE DELETE ON machines
    FOR EACH ROW EXECUTE FUNCTION unplace_worktrees_of_deleted_machine()`
  yield* sql`
    UPDATE worktrees SET worktree_type = NULL, path = NULL, updated_at = now()
    WHERE worktree_type = 'LOCAL' AND machine_id IS NULL`
})
