/**
 * With DATABASE_URL set, migrate that database once before the test files start (they run in
 * parallel, and each would otherwise race to create the migrations table).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { MigrationsLive } from "../../src/layers/Migrations.ts"

export default async function setup() {
  const url = process.env.DATABASE_URL
  if (url === undefined) return
  await Effect.runPromise(
    Layer.build(MigrationsLive.pipe(Layer.provide(PgClient.layer({ url: Redacted.make(url) })))).pipe(
      Effect.scoped,
      Effect.timeout("60 seconds")
    )
  )
}
