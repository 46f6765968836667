/**
 * On both databases, every connection prepares its statements once and runs them by name after
 * (the driver's cache of prepared statements, src/layers/Database.ts); a change of a table's columns (on a
 * Postgres server, a newer process's migration) does not leave a connection failing on the
 * statements it prepared before. Postgres's own view of a session's prepared statements
 * (`pg_prepared_statements`) says what was prepared and how often it ran, and so which statements
 * the workflow engine's patched writes send.
 */
import { MessageStorage, ShardId, ShardingConfig, Snowflake, SqlMessageStorage } from "effect/cluster"
import { SqlClient } from "effect/sql"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DatabaseLive, MAX_PREPARED_TEXTS } from "../../src/layers/Database.ts"
import { testConfig } from "../support/TestApp.ts"

/** The names @effect/sql-pg gives the statements a connection prepares. */
const DRIVER_NAME = /^effect_[0-9a-f]{16}_\d+$/

interface Prepared {
  readonly name: string
  readonly statement: string
  readonly runs: number
}

const database = DatabaseLive.pipe(Layer.provide(testConfig()))

/**
 * A workflow run's request stored as the engine stores it (`id`, its own request id, for the
 * workflow `executionId`), with reads of its state and of the ids of its replies.
 */
const storedRun = (id: number, executionId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO cluster_messages (id, message_id, shard_id, entity_type, entity_id, kind, tag, payload, headers, request_id)
      VALUES (${id}, ${`Workflow/${executionId}/run/`}, 'default:1', 'Workflow', ${executionId}, 0, 'run', '{}', '{}', ${id})`
    return {
      request: sql<{ readonly processed: boolean; readonly last_reply_id: string | null }>`
        SELECT processed, last_reply_id::text FROM cluster_messages WHERE id = ${id}`,
      replies: sql<{ readonly id: string }>`SELECT id::text FROM cluster_replies WHERE request_id = ${id}`
    }
  })

/** The engine's message storage on the test database, for the test's scope. */
const withMessageStorage = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provide(
      SqlMessageStorage.layer.pipe(Layer.provide([ShardingConfig.layer(), NodeCrypto.layerDigest]), Layer.provideMerge(database))
    ),
    Effect.scoped
  )

/**
 * Runs `use` in a transaction, so that every statement runs on one connection, then reads how
 * many times each statement that connection prepared whose text is like `like` ran.
 */
const runsOfPrepared = <E, R>(like: string, use: Effect.Effect<void, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.andThen(
      use,
      sql<{ readonly runs: number }>`
        SELECT (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements
        WHERE statement LIKE ${like} AND statement NOT LIKE '%pg_prepared_statements%'`
    ))).pipe(Effect.map((rows) => rows.map((row) => row.runs)))

describe("prepared statements", () => {
  it.live("a statement is prepared once on a connection and run by name after, with parameters or without", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const connection = yield* sql.reserve
      for (const n of [1, 2, 3]) {
        expect(yield* connection.execute("SELECT $1::int + 1 AS n", [n], undefined)).toEqual([{ n: n + 1 }])
      }
      // Rows as arrays (the driver is given a config object): the same statement, by its name.
      expect(yield* connection.executeValues("SELECT $1::int + 1 AS n", [4])).toEqual([[5]])
      yield* connection.execute("SELECT 'no parameters' AS text", [], undefined)
      const prepared = (yield* connection.execute(
        "SELECT name, statement, (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements ORDER BY statement",
        [],
        undefined
      )) as ReadonlyArray<Prepared>
      // The driver prepares every statement it runs, the pool's own and this query too: only the two above are looked at.
      const ours = prepared.filter((row) => row.statement === "SELECT $1::int + 1 AS n" || row.statement === "SELECT 'no parameters' AS text")
      expect(ours).toEqual([
        { name: expect.stringMatching(DRIVER_NAME), statement: "SELECT $1::int + 1 AS n", runs: 4 },
        { name: expect.stringMatching(DRIVER_NAME), statement: "SELECT 'no parameters' AS text", runs: 1 }
      ])
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)

  it.live("after a table's columns change, a statement alone runs again at once; in a transaction it fails once, then the connection prepares again", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE widened (id int PRIMARY KEY)`
      yield* sql`INSERT INTO widened (id) VALUES (1)`
      const connection = yield* sql.reserve
      const readWhole = connection.execute("SELECT * FROM widened WHERE id = $1", [1], undefined)
      expect(yield* readWhole).toEqual([{ id: 1 }])

      // A column is added (on the same connection: the embedded database's pool has only this one).
      const addColumn = (column: string) => connection.execute(`ALTER TABLE widened ADD COLUMN ${column}`, [], undefined)
      yield* addColumn("label text")
      expect(yield* readWhole).toEqual([{ id: 1, label: null }])
      // The driver ran it again unprepared; the next run prepares it again, with the new columns.
      expect(yield* readWhole).toEqual([{ id: 1, label: null }])

      yield* addColumn("size int")
      yield* connection.execute("BEGIN", [], undefined)
      const inTransaction = yield* Effect.flip(readWhole)
      // The server's error fields are on the reason's cause (@effect/sql-pg 4).
      expect(String((inTransaction.reason.cause as { code?: string }).code)).toBe("0A000")
      yield* connection.execute("ROLLBACK", [], undefined)
      expect(yield* readWhole).toEqual([{ id: 1, label: null, size: null }])
      yield* connection.execute("BEGIN", [], undefined)
      expect(yield* readWhole).toEqual([{ id: 1, label: null, size: null }])
      yield* connection.execute("COMMIT", [], undefined)
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)

  // The engine reads its new messages at every message sent to a local workflow and every 500 ms
  // besides; as effect/cluster ships it, the read lists the shards and the time as literals, so
  // Postgres plans it at every run (patches/effect+4.1.0.patch, docs/runtime.md).
  it.live("the workflow engine's read of new messages is one prepared statement, whatever the time and the shards", () =>
    runsOfPrepared(
      '%UPDATE "cluster_messages" m%',
      Effect.gen(function*() {
        const storage = yield* MessageStorage.MessageStorage
        yield* storage.unprocessedMessages([ShardId.make("default", 1), ShardId.make("default", 2)])
        // A later time and other shards: as shipped, a new text, planned again.
        yield* Effect.sleep("2 millis")
        yield* storage.unprocessedMessages([ShardId.make("default", 3)])
      })
    ).pipe(Effect.map((runs) => expect(runs).toEqual([2])), withMessageStorage), 30_000)

  // A woken workflow's wait reads its run's reply at every tool call; as shipped, the read lists
  // the requests' ids as literals and is sent unprepared.
  it.live("the workflow engine's reads of requests' replies are one prepared statement, whatever the requests", () =>
    runsOfPrepared(
      '%FROM "cluster_replies"%',
      Effect.gen(function*() {
        const storage = yield* MessageStorage.MessageStorage
        yield* storage.repliesForUnfiltered([Snowflake.Snowflake(1)])
        yield* storage.repliesForUnfiltered([Snowflake.Snowflake(2), Snowflake.Snowflake(3)])
      })
    ).pipe(Effect.map((runs) => expect(runs).toEqual([2])), withMessageStorage), 30_000)

  // As effect/cluster ships it, a reply is a transaction of four round trips (BEGIN, the
  // request's update, the reply's insert, COMMIT); patched, one statement does both writes
  // (patches/effect+4.1.0.patch, docs/runtime.md).
  it.live("the workflow engine stores a reply and marks its request processed in one statement, all or nothing", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const storage = yield* SqlMessageStorage.makeEncoded()
      const { replies, request } = yield* storedRun(10, "w")
      const exit = { _tag: "Success", value: null } as const

      const statement = yield* sql.withTransaction(Effect.gen(function*() {
        yield* storage.saveReply({ _tag: "WithExit", id: "11", requestId: "10", exit })
        return yield* sql<{ readonly statement: string }>`
          SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%INSERT INTO "cluster_replies"%'
          AND statement NOT LIKE '%pg_prepared_statements%'`
      }))
      expect(statement).toEqual([{ statement: expect.stringMatching(/^WITH updated AS \(UPDATE "cluster_messages" /) }])
      expect(yield* request).toEqual([{ processed: true, last_reply_id: "11" }])
      expect(yield* replies).toEqual([{ id: "11" }])

      // A second final reply breaks the one-exit-a-request index: the request's update is undone with it.
      yield* sql`UPDATE cluster_messages SET processed = FALSE WHERE id = 10`
      const failed = yield* Effect.flip(storage.saveReply({ _tag: "WithExit", id: "12", requestId: "10", exit }))
      expect(failed._tag).toBe("PersistenceError")
      expect(yield* request).toEqual([{ processed: false, last_reply_id: "11" }])
      expect(yield* replies).toEqual([{ id: "11" }])
    }).pipe(Effect.provide(Layer.merge(database, NodeCrypto.layerDigest)), Effect.scoped), 30_000)

  // As effect/cluster ships it, clearing a run's replies for its replay (a workflow woken: a tool
  // call's result) is a transaction of four round trips (BEGIN, the replies' delete, the
  // request's update, COMMIT); patched, one statement does both writes.
  it.live("the workflow engine clears a run's reply for its replay in one statement, only while that reply is the run's last", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const storage = yield* SqlMessageStorage.makeEncoded()
      const { replies, request } = yield* storedRun(20, "woken")
      yield* storage.saveReply({ _tag: "WithExit", id: "21", requestId: "20", exit: { _tag: "Success", value: null } })

      // A reply that is no longer the run's last (another wake replayed the run meanwhile): nothing changes.
      yield* storage.clearReplies(Snowflake.Snowflake("20"), { expectedReplyId: Snowflake.Snowflake("19") })
      expect(yield* request).toEqual([{ processed: true, last_reply_id: "21" }])
      expect(yield* replies).toEqual([{ id: "21" }])

      const statement = yield* sql.withTransaction(Effect.gen(function*() {
        yield* storage.clearReplies(Snowflake.Snowflake("20"), { expectedReplyId: Snowflake.Snowflake("21") })
        return yield* sql<{ readonly statement: string }>`
          SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%DELETE FROM "cluster_replies"%'
          AND statement NOT LIKE '%pg_prepared_statements%'`
      }))
      expect(statement).toEqual([{ statement: expect.stringMatching(/^WITH deleted AS \(DELETE FROM "cluster_replies" /) }])
      expect(yield* request).toEqual([{ processed: false, last_reply_id: null }])
      expect(yield* replies).toEqual([])
    }).pipe(Effect.provide(Layer.merge(database, NodeCrypto.layerDigest)), Effect.scoped), 30_000)

  // Last: it fills the connection's cache of prepared statements.
  it.live(`a connection keeps at most ${MAX_PREPARED_TEXTS} statements prepared; the least recently used is closed`, () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const connection = yield* sql.reserve
      for (let k = 0; k <= MAX_PREPARED_TEXTS; k++) {
        yield* connection.execute(`SELECT $1::int + ${k} AS n`, [1], undefined)
      }
      const [{ prepared, first, last }] = (yield* connection.execute(
        `SELECT count(*)::int AS prepared,
           count(*) FILTER (WHERE statement = 'SELECT $1::int + 0 AS n')::int AS first,
           count(*) FILTER (WHERE statement = 'SELECT $1::int + ${MAX_PREPARED_TEXTS} AS n')::int AS last
         FROM pg_prepared_statements`,
        [],
        undefined
      )) as ReadonlyArray<{ prepared: number; first: number; last: number }>
      expect(prepared).toBeLessThanOrEqual(MAX_PREPARED_TEXTS)
      expect(prepared).toBeGreaterThan(MAX_PREPARED_TEXTS / 2)
      expect(first).toBe(0)
      expect(last).toBe(1)
    }).pipe(Effect.provide(database), Effect.scoped), 30_000)
})
