/**
 * Triggers a test installs on the server's database for the length of its scope, to make the
 * database do, inside a request's statement, what another request or the database itself would
 * do at that exact point (a deletion racing the request, a deadlock cancelling it).
 */
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"

/**
 * Runs `body` (PL/pgSQL statements) `timing` (e.g. "BEFORE INSERT") each row of `table` that
 * meets `condition` (on NEW or OLD), for as long as the test's scope is open.
 */
export const rowTrigger = (name: string, timing: string, table: string, condition: string, body: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${body};
        RETURN COALESCE(NEW, OLD);
      END $$`)
    yield* sql.unsafe(`CREATE TRIGGER ${name} ${timing} ON ${table} FOR EACH ROW WHEN (${condition}) EXECUTE FUNCTION ${name}()`)
    // The function's trigger goes with it.
    yield* Effect.addFinalizer(() => Effect.ignore(sql.unsafe(`DROP FUNCTION ${name}() CASCADE`)))
  }).pipe(Effect.orDie)

/** An id, checked before it is written into a trigger's text. */
export const literal = (id: string) => {
  expect(id).toMatch(/^[a-z]+_[a-z2-7]{26}$/)
  return `'${id}'`
}
