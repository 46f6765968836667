/**
 * With DATABASE_URL set, every test file gets a database of its own: a copy of the database at
 * DATABASE_URL (migrated once by globalSetup.ts), made before the file runs and dropped after
 * (or, when the file's tests were all skipped, by globalSetup.ts at the end).
 * Server processes sharing a database form one cluster (docs/scale-out.md), so two test files
 * sharing one would run each other's turns. Both the in-process app
 * (TestApp.ts) and the servers spawned as processes (Processes.ts) read DATABASE_URL.
 */
import { afterAll } from "vitest"
import pg from "pg"
import { newCopyName } from "./DatabaseCopies.ts"

const base = process.env.TEST_BASE_DATABASE_URL ?? process.env.DATABASE_URL

if (base !== undefined) {
  process.env.TEST_BASE_DATABASE_URL = base
  const baseUrl = new URL(base)
  const template = baseUrl.pathname.slice(1)
  const name = newCopyName(template)
  const adminUrl = new URL(base)
  adminUrl.pathname = "/postgres"
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl.toString() })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }
  await admin(`CREATE DATABASE "${name}" TEMPLATE "${template}"`)
  const fileUrl = new URL(base)
  fileUrl.pathname = `/${name}`
  process.env.DATABASE_URL = fileUrl.toString()
  afterAll(() => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
}
