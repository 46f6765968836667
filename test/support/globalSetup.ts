/**
 * With DATABASE_URL set, migrate that database once before the test files start; each file then
 * runs on a copy of it (perFileDatabase.ts).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { AppConfig } from "../../src/layers/AppConfig.ts"
import { MigrationsLive } from "../../src/layers/Migrations.ts"

export default async function setup() {
  const url = process.env.DATABASE_URL
  if (url === undefined) return
  await Effect.runPromise(
    Layer.build(MigrationsLive.pipe(Layer.provide([PgClient.layer({ url: Redacted.make(url) }), AppConfig.fromEnv]))).pipe(
      Effect.scoped,
      Effect.timeout("60 seconds")
    )
  )
}
