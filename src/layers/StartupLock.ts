/**
 * Start-up steps that create what must exist once (our migrations, the cluster's storage tables,
 * the bootstrap user) run one process at a time: several server processes started together on a
 * fresh Postgres would otherwise race to create the same tables (the migrator creates its table
 * after a failed look-up, and the cluster uses `CREATE TABLE IF NOT EXISTS`, which concurrent
 * sessions can fail too) and the same user, and all but one would stop at start-up.
 *
 * The lock is a session-level advisory lock on a connection reserved for it while the step runs;
 * Postgres also releases it when the session ends, so a process that dies holding it leaves
 * nothing behind. The embedded database (no DATABASE_URL) belongs to one process, and its pool's
 * one connection leaves none to hold a lock on: the step runs without one there.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import { AppConfig } from "./AppConfig.ts"

/** A fixed key for the advisory lock ("agent-platform start-up"). */
const STARTUP_LOCK_KEY = 4_731_220_915

export const withStartupLock = <A, E, R>(step: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const config = yield* AppConfig
    if (Option.isNone(config.databaseUrl)) return yield* step
    return yield* Effect.scoped(Effect.gen(function*() {
      const connection = yield* Effect.orDie(sql.reserve)
      yield* Effect.acquireRelease(
        Effect.orDie(connection.executeRaw("SELECT pg_advisory_lock($1)", [STARTUP_LOCK_KEY])),
        () => Effect.ignore(connection.executeRaw("SELECT pg_advisory_unlock($1)", [STARTUP_LOCK_KEY]))
      )
      return yield* step
    }))
  })
