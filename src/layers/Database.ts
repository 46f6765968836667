/**
 * The database: a real Postgres when DATABASE_URL is set, else the embedded PGlite (real
 * Postgres in WASM) in DATA_DIR, served on a loopback socket so the same `@effect/sql-pg` driver
 * talks to both. PGlite is a single session, so its pool holds exactly one connection
 * (EFFECT-NOTES.md 3). On shutdown the pool closes first, then PGlite flushes and closes, so the
 * data directory is never left half-written.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { AppConfig } from "./AppConfig.ts"

const embedded = (dataDir: string) =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const location = dataDir === "memory://" ? dataDir : join(dataDir, "pg")
      if (location !== "memory://") mkdirSync(location, { recursive: true })
      const db = yield* Effect.acquireRelease(
        Effect.promise(() => PGlite.create(location)),
        (db) => Effect.promise(() => db.close())
      )
      const server = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0 })
          await server.start()
          return server
        }),
        (server) => Effect.promise(() => server.stop())
      )
      const address = server.getServerConn()
      const port = Number(address.slice(address.lastIndexOf(":") + 1))
      return PgClient.layer({
        host: "127.0.0.1",
        port,
        username: "postgres",
        database: "postgres",
        maxConnections: 1
      })
    })
  )

export const DatabaseLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.databaseUrl, {
      onSome: (url) => PgClient.layer({ url, maxConnections: 10 }),
      onNone: () => embedded(config.dataDir)
    }))
)
