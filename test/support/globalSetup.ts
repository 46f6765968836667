/**
 * With DATABASE_URL set, migrate that database once before the test files start; each file then
 * runs on a copy of it (perFileDatabase.ts). At the end, the copies still there are dropped: a
 * file whose tests were all skipped never runs the hook that drops its own.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import pg from "pg"
import { AppConfig } from "../../src/layers/AppConfig.ts"
import { MigrationsLive } from "../../src/layers/Migrations.ts"
import { isCopyOf } from "./DatabaseCopies.ts"

export default async function setup() {
  const url = process.env.DATABASE_URL
  if (url === undefined) return
  await Effect.runPromise(
    Layer.build(MigrationsLive.pipe(Layer.provide([PgClient.layer({ url: Redacted.make(url) }), AppConfig.fromEnv]))).pipe(
      Effect.scoped,
      Effect.timeout("60 seconds")
    )
  )
  return () => dropCopies(url)
}

/** Drops the per-file copies of the database at `url` that are left. */
const dropCopies = async (url: string) => {
  const admin = new URL(url)
  admin.pathname = "/postgres"
  const client = new pg.Client({ connectionString: admin.toString() })
  await client.connect()
  try {
    const template = new URL(url).pathname.slice(1)
    const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database")
    for (const { datname } of rows.filter((row) => isCopyOf(template, row.datname))) {
      await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`)
    }
  } finally {
    await client.end()
  }
}
