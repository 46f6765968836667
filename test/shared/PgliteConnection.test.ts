/**
 * The embedded database's in-process connection (src/layers/PgliteConnection.ts), through the
 * `pg` driver as the server uses it: queries with parameters, a failing statement in a
 * transaction, and a connection dropped inside a transaction (rolled back, as a server does).
 */
import { PGlite } from "@electric-sql/pglite"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import Pg from "pg"
import { pgliteConnections } from "../../src/layers/PgliteConnection.ts"

describe("PGlite in-process connection", () => {
  let db: PGlite
  let pool: Pg.Pool

  beforeEach(async () => {
    db = await PGlite.create("memory://")
    pool = new Pg.Pool({ stream: pgliteConnections(db), max: 1, user: "postgres", database: "postgres" })
    await pool.query("CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)")
  })

  afterEach(async () => {
    await pool.end()
    await db.close()
  })

  it("runs parameterized queries and returns their rows", async () => {
    await pool.query("INSERT INTO notes VALUES ($1, $2), ($3, $4)", [1, "one", 2, "two"])
    const { rows } = await pool.query("SELECT id, body FROM notes WHERE id >= $1 ORDER BY id", [1])
    expect(rows).toEqual([{ id: 1, body: "one" }, { id: 2, body: "two" }])
  })

  it("a failing statement fails with Postgres's error; the transaction rolls back and the connection goes on", async () => {
    const client = await pool.connect()
    await client.query("BEGIN")
    await client.query("INSERT INTO notes VALUES ($1, $2)", [1, "one"])
    const failure = await client.query("INSERT INTO notes VALUES ($1, $2)", [1, "again"]).catch((error: unknown) => error)
    expect(failure).toMatchObject({ code: "23505" })
    await client.query("ROLLBACK")
    client.release()
    expect((await pool.query("SELECT count(*)::int AS n FROM notes")).rows).toEqual([{ n: 0 }])
  })

  it("a connection dropped inside a transaction rolls it back; the next connection sees nothing of it", async () => {
    const client = await pool.connect()
    await client.query("BEGIN")
    await client.query("INSERT INTO notes VALUES ($1, $2)", [1, "uncommitted"])
    expect(db.isInTransaction()).toBe(true)
    client.release(new Error("dropped"))
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM notes")
    expect(rows).toEqual([{ n: 0 }])
    expect(db.isInTransaction()).toBe(false)
  })
})
