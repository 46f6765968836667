/**
 * The workflow engine's runner storage (`SqlRunnerStorage` of effect/cluster, as patched:
 * docs/dependencies.md). A refresh of a runner's shards, which the cluster makes before each
 * persisted reply, writes the runner's heartbeat at most once a second, and reads the advisory
 * locks its lock session holds (pg_locks, a copy of the server's whole lock table) at most once a
 * second: in between, for shards the session was seen holding, it only proves the session is
 * still there. So it is one cheap statement, not a write and a read of pg_locks. Postgres only: on
 * the embedded database the server keeps its one runner's storage in memory
 * (src/layers/WorkflowEngine.ts).
 */
import { Runner, RunnerAddress, RunnerStorage, ShardId, ShardingConfig, SqlRunnerStorage } from "effect/cluster"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { DatabaseLive } from "../../src/layers/Database.ts"
import { eventually } from "../support/Polling.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { testConfig } from "../support/TestApp.ts"

const database = DatabaseLive.pipe(Layer.provide(testConfig()))
const storage = SqlRunnerStorage.layer.pipe(Layer.provide(ShardingConfig.layer()), Layer.provideMerge(database))

/**
 * The backend of the runner's lock session (the one holding advisory locks in this database) and
 * its last statement, which says how the last refresh checked the locks.
 */
const lockSession = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ readonly pid: number; readonly query: string }>`
      SELECT a.pid, a.query FROM pg_stat_activity a
      WHERE a.pid = (
        SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database
        WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database() LIMIT 1)`,
    (rows) => rows[0]
  ))

const READ_OF_LOCKS = /FROM pg_locks/

/** Registers a runner at `address` and acquires `shards` for it. */
const runnerHolding = (address: RunnerAddress.RunnerAddress, shards: ReadonlyArray<ShardId.ShardId>) =>
  Effect.gen(function*() {
    const runners = yield* RunnerStorage.RunnerStorage
    yield* runners.register(Runner.make({ address, groups: ["default"], weight: 1 }), true)
    expect(yield* runners.acquire(address, shards)).toEqual(shards)
  })

describe("runner storage refresh", () => {
  it.live.skipIf(usesEmbeddedDatabase)("a refresh of a runner's shards checks them every time and writes its heartbeat at most once a second", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const runners = yield* RunnerStorage.RunnerStorage
      const address = RunnerAddress.make("127.0.0.1", 34567)
      const shard = ShardId.make("default", 1)
      yield* runnerHolding(address, [shard])
      const heartbeat = Effect.map(
        sql<{ readonly at: number }>`
          SELECT extract(epoch FROM last_heartbeat)::float8 AS at FROM cluster_runners WHERE address = '127.0.0.1:34567'`,
        (rows) => rows[0].at
      )

      const registered = yield* heartbeat
      expect(yield* runners.refresh(address, [shard])).toEqual([shard])
      const first = yield* heartbeat
      expect(first).toBeGreaterThan(registered)
      // Within the second: the shard is checked again, the heartbeat is not written again.
      expect(yield* runners.refresh(address, [shard])).toEqual([shard])
      expect(yield* heartbeat).toBe(first)
      yield* Effect.sleep("1100 millis")
      expect(yield* runners.refresh(address, [shard])).toEqual([shard])
      expect(yield* heartbeat).toBeGreaterThan(first)
    }).pipe(Effect.provide(storage), Effect.scoped), 30_000)

  it.live.skipIf(usesEmbeddedDatabase)("refreshes made at once, as before the replies of many turns, write one heartbeat between them", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const runners = yield* RunnerStorage.RunnerStorage
      const address = RunnerAddress.make("127.0.0.1", 34569)
      const shard = ShardId.make("default", 1)
      yield* runnerHolding(address, [shard])
      // Each heartbeat this runner writes is counted (its registration was written before).
      yield* sql`CREATE TABLE heartbeat_writes_34569 (at timestamptz NOT NULL)`
      yield* sql.unsafe(`
        CREATE FUNCTION count_heartbeat_34569() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO heartbeat_writes_34569 VALUES (NEW.last_heartbeat); RETURN NEW; END $$`)
      yield* sql.unsafe(`
        CREATE TRIGGER heartbeat_34569 AFTER UPDATE ON cluster_runners
        FOR EACH ROW WHEN (NEW.address = '127.0.0.1:34569') EXECUTE FUNCTION count_heartbeat_34569()`)
      const writes = Effect.map(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM heartbeat_writes_34569`, (rows) => rows[0].n)
      const refreshAtOnce = Effect.all(Array.from({ length: 20 }, () => runners.refresh(address, [shard])), { concurrency: "unbounded" })

      yield* Effect.gen(function*() {
        const refreshed = yield* refreshAtOnce
        expect(refreshed.every((shards) => shards.length === 1 && shards[0] === shard)).toBe(true)
        expect(yield* writes).toBe(1)
        yield* Effect.sleep("1100 millis")
        yield* refreshAtOnce
        expect(yield* writes).toBe(2)
      }).pipe(Effect.ensuring(Effect.orDie(Effect.all([
        sql`DROP TRIGGER heartbeat_34569 ON cluster_runners`,
        sql`DROP FUNCTION count_heartbeat_34569()`,
        sql`DROP TABLE heartbeat_writes_34569`
      ]))))
    }).pipe(Effect.provide(storage), Effect.scoped), 30_000)

  it.live.skipIf(usesEmbeddedDatabase)("refreshes of different shards made at once are checked together, and each gets back only its own shards that are held", () =>
    Effect.gen(function*() {
      const runners = yield* RunnerStorage.RunnerStorage
      const address = RunnerAddress.make("127.0.0.1", 34570)
      const shards = Array.from({ length: 20 }, (_, index) => ShardId.make("default", index + 1))
      const held = shards.slice(0, 10)
      yield* runnerHolding(address, held)

      // The first refresh runs alone; the others, asked for while it runs, go together in the next check.
      const refreshed = yield* Effect.all(
        [...shards.map((shard) => [shard]), [shards[0], shards[15]], [shards[3], shards[4]]].map((asked) => runners.refresh(address, asked)),
        { concurrency: "unbounded" }
      )
      expect(refreshed.slice(0, 20)).toEqual(shards.map((shard, index) => index < 10 ? [shard] : []))
      expect(refreshed[20]).toEqual([shards[0]])
      expect(refreshed[21]).toEqual([shards[3], shards[4]])
    }).pipe(Effect.provide(storage), Effect.scoped), 30_000)

  it.live.skipIf(usesEmbeddedDatabase)("a refresh of shards its lock session was seen holding in the last second only proves the session is there; a release or an ended session is read again", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const runners = yield* RunnerStorage.RunnerStorage
      const address = RunnerAddress.make("127.0.0.1", 34568)
      const one = ShardId.make("default", 1)
      const two = ShardId.make("default", 2)
      yield* runnerHolding(address, [one, two])
      const session = yield* lockSession

      expect(yield* runners.refresh(address, [one])).toEqual([one])
      expect((yield* lockSession).query).toBe("SELECT 1")
      expect(yield* runners.refresh(address, [one, two])).toEqual([one, two])
      expect(yield* lockSession).toEqual({ pid: session.pid, query: "SELECT 1" })
      yield* Effect.sleep("1100 millis")
      expect(yield* runners.refresh(address, [one])).toEqual([one])
      expect((yield* lockSession).query).toMatch(READ_OF_LOCKS)

      // A release forgets what the session was seen holding: the next refresh reads its locks.
      yield* runners.release(address, two)
      expect(yield* runners.refresh(address, [one, two])).toEqual([one])
      expect((yield* lockSession).query).toMatch(READ_OF_LOCKS)
      expect(yield* runners.refresh(address, [one])).toEqual([one])
      expect((yield* lockSession).query).toBe("SELECT 1")

      // The session ends (its locks with it): within the second, the refresh confirms nothing.
      yield* sql`SELECT pg_terminate_backend(${session.pid})`
      const ended = yield* Effect.exit(runners.refresh(address, [one]))
      expect(Exit.isFailure(ended) || ended.value.length === 0).toBe(true)
      // On the next session, which holds none of the shards, the refresh reads its locks and finds none.
      yield* eventually(Effect.exit(runners.refresh(address, [one])), (exit) => Exit.isSuccess(exit), "a new lock session")
      expect(yield* runners.refresh(address, [one])).toEqual([])
    }).pipe(Effect.provide(storage), Effect.scoped), 30_000)
})
