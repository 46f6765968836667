/**
 * An interrupted statement's cancel never stops another fiber's statement (@effect/sql-pg 4's own cancel
 * handling, src/layers/Database.ts), and on the embedded database never holds the other fibers' statements
 * (src/layers/PgliteConnection.ts).
 *
 * The race, made certain: every connection of the pool is busy, so the cancel of an interrupted
 * statement waits in the pool's queue, behind a statement already waiting for a connection. The
 * interrupted statement then completes: @effect/sql-pg releases its connection, which the waiting
 * statement takes; the cancel runs when the next connection frees up, during that statement.
 * With the pool @effect/sql-pg makes, that statement fails with 57014 ("canceling statement due
 * to user request"); here it completes. The same on a reserved connection, whose holder goes on
 * with its next statement once @effect/sql-pg has given up waiting for the cancel.
 *
 * Cancels of many statements queued on one connection (the cluster's shard releases at shutdown)
 * share one cancel connection instead of opening one each.
 *
 * On the embedded database, a cancel has nothing to stop (PGlite runs each statement to its end),
 * but @effect/sql-pg waited up to 5 s for it on the pool's one connection, which an interrupted
 * transaction holds: every other statement waited with it. Its pool answers cancels at once.
 */
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import { DatabaseLive } from "../../src/layers/Database.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { testConfig } from "../support/TestApp.ts"

/** Connections of the pool (src/layers/Database.ts). */
const POOL_SIZE = 10

describe.skipIf(usesEmbeddedDatabase)("cancelled statements (Postgres only)", () => {
  it.live("a late cancel finds the interrupted statement's connection retired, not another fiber's statement", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const backendOf = sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
      yield* backendOf // the pool is up
      // Interrupted at once; the statement itself runs for a second more.
      const interrupted = yield* Effect.forkChild(sql`SELECT pg_sleep(1)`)
      // The rest of the pool, busy for 3 s: then the cancel gets a connection.
      const busy = yield* Effect.forkChild(Effect.all(Array.from({ length: POOL_SIZE - 1 }, () => sql`SELECT pg_sleep(3)`), { concurrency: "unbounded" }))
      yield* Effect.sleep("300 millis")
      // First in the queue for a connection; it runs from about 1 s to 5 s, across the cancel.
      const waiting = yield* Effect.forkChild(sql<{ done: string }>`SELECT 'done' AS done FROM pg_sleep(4)`)
      yield* Effect.sleep("100 millis")
      yield* Effect.forkChild(Fiber.interrupt(interrupted))

      const result = yield* Fiber.join(waiting).pipe(Effect.result)
      expect(result._tag === "Success" ? result.success : String(result.failure.cause)).toEqual([{ done: "done" }])
      yield* Fiber.join(busy)
      // The pool goes on serving.
      expect(yield* backendOf).toHaveLength(1)
    }).pipe(Effect.provide(DatabaseLive.pipe(Layer.provide(testConfig()))), Effect.scoped), 30_000)

  it.live("on a connection its holder keeps (reserved), the cancel stops the interrupted statement, not the holder's next one", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const reserved = yield* sql.reserve
      // The rest of the pool, busy for longer than @effect/sql-pg waits for a cancel (5 s).
      const busy = yield* Effect.forkChild(Effect.all(Array.from({ length: POOL_SIZE - 1 }, () => sql`SELECT pg_sleep(6)`), { concurrency: "unbounded" }))
      yield* Effect.sleep("300 millis")
      const first = yield* reserved.execute("SELECT pg_sleep(1)", [], undefined).pipe(Effect.timeoutOption("300 millis"))
      expect(first._tag).toBe("None")
      // Runs across the moment a cancel waiting for a pool connection would have been sent (6 s).
      const next = yield* reserved.execute("SELECT 'done' AS done FROM pg_sleep(3)", [], undefined).pipe(Effect.result)
      expect(next._tag === "Success" ? next.success : String(next.failure.cause)).toEqual([{ done: "done" }])
      yield* Fiber.join(busy)
    }).pipe(Effect.provide(DatabaseLive.pipe(Layer.provide(testConfig()))), Effect.scoped), 30_000)

  it.live("the cancels of many statements queued on one connection share one cancel connection", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const sessions = Effect.map(
        sql<{ sessions: number }>`SELECT sessions::int AS sessions FROM pg_stat_database WHERE datname = current_database()`,
        (rows) => rows[0].sessions
      )
      const reserved = yield* sql.reserve
      const before = yield* sessions
      // Queued on the one connection, as the cluster's shard releases are at shutdown.
      const queued = yield* Effect.forkChild(
        Effect.all(Array.from({ length: 50 }, () => reserved.execute("SELECT pg_sleep(0.2)", [], undefined)), { concurrency: "unbounded" })
      )
      yield* Effect.sleep("100 millis")
      yield* Fiber.interrupt(queued)
      // Sessions are counted when they end. @effect/sql-pg 4 sends a cancel as a bare CancelRequest, which
      // Postgres does not count as a session (pg's cancel was a whole connection, so v3 also checked >= 1 here).
      yield* Effect.sleep("500 millis")
      const opened = (yield* sessions) - before
      expect(opened).toBeLessThanOrEqual(5)
    }).pipe(Effect.provide(DatabaseLive.pipe(Layer.provide(testConfig()))), Effect.scoped), 30_000)
})

describe.skipIf(!usesEmbeddedDatabase)("cancelled statements (embedded database)", () => {
  it.live("an interrupted transaction leaves the database to the next statement at once", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`SELECT 1`
      // PGlite runs a statement on this thread and its answer comes in the event loop's next turn:
      // the interruption, 50 ms in, comes while the transaction waits for its statement's answer.
      const transaction = yield* Effect.forkChild(sql.withTransaction(sql`SELECT pg_sleep(0.3)`))
      yield* Effect.sleep("50 millis")
      yield* Effect.forkChild(Fiber.interrupt(transaction))
      // Less than the 5 s @effect/sql-pg waits for a cancel.
      const next = yield* sql<{ done: string }>`SELECT 'done' AS done`.pipe(Effect.timeoutOption("4 seconds"))
      expect(Option.getOrNull(next)).toEqual([{ done: "done" }])
    }).pipe(Effect.provide(DatabaseLive.pipe(Layer.provide(testConfig()))), Effect.scoped), 30_000)
})
