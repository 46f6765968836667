/**
 * Pipelined statements (src/services/shared/PipelinedStatements.ts): on Postgres, a read outside a
 * transaction runs on the pipelined pool's few shared connections; inside a transaction, on the
 * transaction's connection, where it sees what the transaction wrote; on the embedded database,
 * on its one session. The guarded appends that run there never wait there for a lock:
 * test/runtime/Lifecycle.test.ts (`waitedOn`).
 */
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { DatabaseLive, PIPELINED_APPLICATION_NAME } from "../../src/layers/Database.ts"
import { PipelinedStatements } from "../../src/services/shared/PipelinedStatements.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { testConfig } from "../support/TestApp.ts"

const database = DatabaseLive.pipe(Layer.provide(testConfig()))

/** The session a statement ran on: its backend and its application name. */
const sessionOf = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ readonly pid: number; readonly name: string }>`SELECT pg_backend_pid() AS pid, current_setting('application_name') AS name`,
    (rows) => rows[0]!
  )

describe("pipelined statements", () => {
  it.live("a read inside a transaction runs on the transaction's connection and sees its uncommitted write; outside, it does not", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const reads = yield* PipelinedStatements
      yield* sql`CREATE TABLE pipelined_probe (id int PRIMARY KEY)`
      const count = reads.run((sql) => Effect.map(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pipelined_probe`, (rows) => rows[0]!.n))

      // A fiber started before the transaction reads outside it, once the row is written (on the
      // embedded database's one session it would wait for the transaction's end: not read there).
      const written = yield* Deferred.make<void>()
      const outsideRead = yield* Effect.forkChild(Effect.andThen(Deferred.await(written), count))
      const seen = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO pipelined_probe (id) VALUES (1)`
        const inside = yield* count
        yield* Deferred.succeed(written, undefined)
        const outside = usesEmbeddedDatabase ? undefined : yield* Fiber.join(outsideRead)
        return { inside, outside, session: yield* reads.run(sessionOf), transaction: yield* sessionOf(sql) }
      }))
      expect(seen.inside).toBe(1)
      if (!usesEmbeddedDatabase) expect(seen.outside).toBe(0)
      expect(seen.session).toEqual(seen.transaction)
      expect(yield* count).toBe(1)
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)

  it.live.skipIf(usesEmbeddedDatabase)("on Postgres, reads outside a transaction share the pipelined pool's two connections, named apart from the main pool's", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const reads = yield* PipelinedStatements
      const sessions = yield* Effect.all(Array.from({ length: 64 }, () => reads.run(sessionOf)), { concurrency: "unbounded" })
      expect(new Set(sessions.map((session) => session.name))).toEqual(new Set([PIPELINED_APPLICATION_NAME]))
      expect(new Set(sessions.map((session) => session.pid)).size).toBeLessThanOrEqual(2)
      // The main pool's statements run elsewhere.
      const main = yield* Effect.all(Array.from({ length: 8 }, () => sessionOf(sql)), { concurrency: "unbounded" })
      expect(main.every((session) => session.name !== PIPELINED_APPLICATION_NAME)).toBe(true)
      expect(main.some((session) => sessions.some((read) => read.pid === session.pid))).toBe(false)
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)
})
