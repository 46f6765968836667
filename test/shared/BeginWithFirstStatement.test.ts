/**
 * On both databases, a transaction's BEGIN is answered at once and sent in front of its first
 * statement (src/layers/BeginWithFirstStatement.ts): the statement runs inside the transaction,
 * a failing one fails its transaction and leaves the connection in none, an empty transaction
 * leaves nothing open, and a first statement that cannot carry BEGIN (no parameters, a
 * savepoint) gets it sent on its own first.
 *
 * `set_config(name, value, true)` sets a value for the current transaction only: a statement run
 * outside a transaction loses it as it ends, so reading it back says whether the statements ran
 * in one transaction.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DatabaseLive } from "../../src/layers/Database.ts"
import { testConfig } from "../support/TestApp.ts"

const database = DatabaseLive.pipe(Layer.provide(testConfig()))

const PROBE = "app.probe"

/** Sets the probe for the current transaction only. */
const setProbe = (value: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT set_config(${PROBE}, ${value}, true)`)

/** The probe's value in the current transaction ("" once it has ended). */
const readProbe = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => Effect.map(sql<{ value: string | null }>`SELECT current_setting(${PROBE}, true) AS value`, ([row]) => row.value ?? "")
)

describe("BEGIN with the first statement", () => {
  it.live("the first statement runs inside its transaction, and the transaction commits or rolls back whole", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE begun (id int PRIMARY KEY)`

      // Warm: the connection prepares BEGIN by its first transaction.
      yield* sql.withTransaction(sql`INSERT INTO begun (id) VALUES (${0})`)
      expect(yield* sql.withTransaction(Effect.zipRight(setProbe("in"), readProbe))).toBe("in")
      expect(yield* readProbe).toBe("")

      const failed = yield* Effect.flip(sql.withTransaction(Effect.zipRight(
        sql`INSERT INTO begun (id) VALUES (${1})`,
        Effect.fail("stop" as const)
      )))
      expect(failed).toBe("stop")
      yield* sql.withTransaction(Effect.zipRight(sql`INSERT INTO begun (id) VALUES (${2})`, sql`INSERT INTO begun (id) VALUES (${3})`))
      const ids = yield* sql<{ id: number }>`SELECT id FROM begun ORDER BY id`
      expect(ids.map((row) => row.id)).toEqual([0, 2, 3])
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)

  it.live("a failing first statement fails its transaction with its own error and leaves the connection in no transaction", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(setProbe("warm"))
      const failure = yield* Effect.flip(sql.withTransaction(sql`SELECT 1 / ${0}::int AS quotient`))
      expect(String((failure.cause as { code?: string }).code)).toBe("22012")
      yield* setProbe("alone")
      expect(yield* readProbe).toBe("")
      expect(yield* sql.withTransaction(Effect.zipRight(setProbe("after"), readProbe))).toBe("after")
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)

  it.live("an empty transaction leaves none open", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(setProbe("warm"))
      yield* sql.withTransaction(Effect.void)
      yield* Effect.flip(sql.withTransaction(Effect.fail("empty and failed" as const)))
      yield* setProbe("alone")
      expect(yield* readProbe).toBe("")
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)

  it.live("a first statement without parameters, or a savepoint, gets BEGIN sent on its own first", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(setProbe("warm"))
      const unprepared = sql.withTransaction(Effect.zipRight(sql`SELECT set_config('app.probe', 'simple', true)`, readProbe))
      expect(yield* unprepared).toBe("simple")
      const nested = sql.withTransaction(sql.withTransaction(Effect.zipRight(setProbe("nested"), readProbe)))
      expect(yield* nested).toBe("nested")
      expect(yield* readProbe).toBe("")
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)
})
