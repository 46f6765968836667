/**
 * The embedded database's in-process connection (src/layers/PgliteConnection.ts), through the
 * `pg` driver as the server uses it: queries with parameters, a failing statement in a
 * transaction, a connection dropped inside a transaction (rolled back, as a server does), each
 * connection starting a session of its own on PGlite's one session, statements that leave the
 * event loop free for the process's sockets, and the notifications of a commit told before its
 * answer.
 */
import { PGlite } from "@electric-sql/pglite"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { createServer, get } from "node:http"
import type { AddressInfo } from "node:net"
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

  it("a new connection starts as a new session: the last one's prepared statements and open transaction are gone", async () => {
    const connect = async () => {
      const client = new Pg.Client({ stream: pgliteConnections(db), user: "postgres", database: "postgres" })
      await client.connect()
      return client
    }
    const prepared = { name: "note_by_id", text: "SELECT body FROM notes WHERE id = $1", values: [1] }
    const first = await connect()
    await first.query(prepared)
    await first.query("BEGIN")
    await first.query("INSERT INTO notes VALUES ($1, $2)", [1, "left open"])

    const second = await connect()
    try {
      expect((await second.query("SELECT name FROM pg_prepared_statements")).rows).toEqual([])
      // The same name again: a new `pg` client prepares every statement it names.
      expect((await second.query(prepared)).rows).toEqual([])
      await second.query("BEGIN")
      await second.query("INSERT INTO notes VALUES ($1, $2)", [2, "second's"])
      // The first connection ends inside what it thinks is its transaction: the session is the second's now.
      await first.end()
      await second.query("COMMIT")
      expect((await second.query("SELECT id, body FROM notes")).rows).toEqual([{ id: 2, body: "second's" }])
    } finally {
      await second.end()
    }
  })

  it("tells the listener of a commit's notifications before the driver has the commit's answer; a rollback's none", async () => {
    const told: Array<string> = []
    const listening = new Pg.Pool({
      stream: pgliteConnections(db, (channel) => told.push(channel)),
      max: 1,
      user: "postgres",
      database: "postgres"
    })
    try {
      await db.exec("LISTEN changes")
      const client = await listening.connect()
      await client.query("BEGIN")
      await client.query("SELECT pg_notify('changes', 'one'), pg_notify('changes', 'two'), pg_notify('unheard', '')")
      expect(told).toEqual([])
      const toldWhenCommitted = await client.query("COMMIT").then(() => [...told])
      expect(toldWhenCommitted).toEqual(["changes", "changes"])

      await client.query("BEGIN")
      await client.query("SELECT pg_notify('changes', 'undone')")
      await client.query("ROLLBACK")
      expect(told).toHaveLength(2)

      // A statement outside a transaction commits by itself; with parameters, through the extended protocol.
      const toldWhenAnswered = await client.query("SELECT pg_notify($1, '')", ["changes"]).then(() => [...told])
      expect(toldWhenAnswered).toHaveLength(3)
      client.release()
    } finally {
      await listening.end()
    }
  })

  it("statements one after another leave the event loop free: a new connection is answered while they run", async () => {
    const server = createServer((_request, response) => response.end("ok"))
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
    try {
      const { port } = server.address() as AddressInfo
      let statementsRun = 0
      let statementsWhenAnswered: number | undefined
      const answered = new Promise<void>((resolve, reject) =>
        get({ host: "127.0.0.1", port, path: "/", agent: false }, (response) => {
          response.resume()
          response.on("end", () => {
            statementsWhenAnswered = statementsRun
            resolve()
          })
        }).on("error", reject)
      )
      // A busy server's database work, one statement after another. Were each answer delivered
      // in the same turn of the event loop, the request above would wait for all of them.
      const STATEMENTS = 500
      for (; statementsRun < STATEMENTS; statementsRun++) await pool.query("SELECT $1::int AS n", [statementsRun])
      await answered
      expect(statementsWhenAnswered).toBeLessThan(STATEMENTS)
    } finally {
      server.close()
    }
  })
})
