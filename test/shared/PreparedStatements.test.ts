/**
 * On both databases, every connection prepares its statements with parameters once and runs
 * them by name after (src/layers/PreparedStatements.ts); a change of a table's columns (on a
 * Postgres server, a newer process's migration) does not leave a connection failing on the
 * statements it prepared before. Postgres's own view of a session's prepared statements
 * (`pg_prepared_statements`) says what was prepared and how often it ran.
 */
import { MessageStorage, ShardId, ShardingConfig, SqlMessageStorage } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DatabaseLive } from "../../src/layers/Database.ts"
import { MAX_PREPARED_TEXTS } from "../../src/layers/PreparedStatements.ts"
import { testConfig } from "../support/TestApp.ts"

interface Prepared {
  readonly name: string
  readonly statement: string
  readonly runs: number
}

const database = DatabaseLive.pipe(Layer.provide(testConfig()))

describe("prepared statements", () => {
  it.live("a statement with parameters is prepared once on a connection and run by name after; one without is not", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const connection = yield* sql.reserve
      for (const n of [1, 2, 3]) {
        expect(yield* connection.execute("SELECT $1::int + 1 AS n", [n], undefined)).toEqual([{ n: n + 1 }])
      }
      // Rows as arrays (the driver is given a config object): the same statement, by its name.
      expect(yield* connection.executeValues("SELECT $1::int + 1 AS n", [4])).toEqual([[5]])
      yield* connection.execute("SELECT 'no parameters' AS text", [], undefined)
      const prepared = (yield* connection.execute(
        "SELECT name, statement, (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements",
        [],
        undefined
      )) as ReadonlyArray<Prepared>
      expect(prepared).toEqual([{ name: expect.stringMatching(/^p\d+g0$/), statement: "SELECT $1::int + 1 AS n", runs: 4 }])
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)

  it.live("after a table's columns change, a statement alone runs again at once; in a transaction it fails once, then the connection prepares again", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE widened (id int PRIMARY KEY)`
      yield* sql`INSERT INTO widened (id) VALUES (1)`
      const connection = yield* sql.reserve
      const readWhole = connection.execute("SELECT * FROM widened WHERE id = $1", [1], undefined)
      expect(yield* readWhole).toEqual([{ id: 1 }])

      // A column is added (on the same connection: the embedded database's pool has only this one).
      const addColumn = (column: string) => connection.execute(`ALTER TABLE widened ADD COLUMN ${column}`, [], undefined)
      yield* addColumn("label text")
      expect(yield* readWhole).toEqual([{ id: 1, label: null }])

      yield* addColumn("size int")
      yield* connection.execute("BEGIN", [], undefined)
      const inTransaction = yield* Effect.flip(readWhole)
      expect(String((inTransaction.cause as { code?: string }).code)).toBe("0A000")
      yield* connection.execute("ROLLBACK", [], undefined)
      expect(yield* readWhole).toEqual([{ id: 1, label: null, size: null }])
      yield* connection.execute("BEGIN", [], undefined)
      expect(yield* readWhole).toEqual([{ id: 1, label: null, size: null }])
      yield* connection.execute("COMMIT", [], undefined)
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)

  // The engine reads its new messages at every message sent to a local workflow and every 500 ms
  // besides; as `@effect/cluster` ships it, the read lists the shards and the time as literals, so
  // Postgres plans it at every run (patches/@effect+cluster+0.60.2.patch, docs/runtime.md).
  it.live("the workflow engine's read of new messages is one prepared statement, whatever the time and the shards", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const storage = yield* MessageStorage.MessageStorage
      // In one transaction, so that every statement runs on the connection whose prepared statements are read.
      const prepared = yield* sql.withTransaction(Effect.gen(function*() {
        yield* storage.unprocessedMessages([ShardId.make("default", 1), ShardId.make("default", 2)])
        // A later time and other shards: as shipped, a new text, planned again.
        yield* Effect.sleep("2 millis")
        yield* storage.unprocessedMessages([ShardId.make("default", 3)])
        return yield* sql<{ readonly runs: number }>`
          SELECT (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements
          WHERE statement LIKE '%UPDATE "cluster_messages" m%'`
      }))
      expect(prepared).toEqual([{ runs: 2 }])
    }).pipe(
      Effect.provide(SqlMessageStorage.layer.pipe(Layer.provide(ShardingConfig.layer()), Layer.provideMerge(database))),
      Effect.scoped
    ), 30_000)

  // Last: the texts it names are the process's, so the tests after it would run unprepared.
  it.live(`a process names at most ${MAX_PREPARED_TEXTS} distinct texts; the ones after run unprepared`, () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const connection = yield* sql.reserve
      for (let k = 0; k <= MAX_PREPARED_TEXTS; k++) {
        yield* connection.execute(`SELECT $1::int + ${k} AS n`, [1], undefined)
      }
      const [{ prepared, last }] = (yield* connection.execute(
        `SELECT count(*)::int AS prepared, count(*) FILTER (WHERE statement = 'SELECT $1::int + ${MAX_PREPARED_TEXTS} AS n')::int AS last
         FROM pg_prepared_statements`,
        [],
        undefined
      )) as ReadonlyArray<{ prepared: number; last: number }>
      expect(prepared).toBeLessThanOrEqual(MAX_PREPARED_TEXTS)
      expect(prepared).toBeGreaterThan(MAX_PREPARED_TEXTS / 2)
      expect(last).toBe(0)
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)
})
