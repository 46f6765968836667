import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A notice on the channel `access_changes` at the commit of every change to the tables a
 * request's principal is read from (src/services/tenancy/PrincipalCache.ts): the embedded
 * database's server keeps principals until one comes. Row triggers, so that the rows a cascade
 * deletes (an organization's, a user's) count too; Postgres sends a transaction's identical
 * notices once. A Postgres server does not listen: there the notices go to no one.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION notify_access_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('access_changes', '');
      RETURN NULL;
    END $$`
  for (const table of ["api_keys", "org_members", "projects", "project_members"]) {
    yield* sql.unsafe(`
      CREATE TRIGGER ${table}_access_changes AFTER INSERT OR UPDATE OR DELETE ON ${table}
      FOR EACH ROW EXECUTE FUNCTION notify_access_changes()`)
    yield* sql.unsafe(`
      CREATE TRIGGER ${table}_access_truncated AFTER TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION notify_access_changes()`)
  }
})
