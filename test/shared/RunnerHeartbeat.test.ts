/**
 * The workflow engine's runner storage (`SqlRunnerStorage` of effect/cluster, as patched:
 * docs/dependencies.md): a refresh of a runner's shards checks their locks every time and writes
 * the runner's heartbeat at most once a second, so the refresh that confirms a shard before each
 * reply is one statement, not two. Postgres only: on the embedded database the server keeps its
 * one runner's storage in memory (src/layers/WorkflowEngine.ts).
 */
import { Runner, RunnerAddress, RunnerStorage, ShardId, ShardingConfig, SqlRunnerStorage } from "effect/cluster"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DatabaseLive } from "../../src/layers/Database.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { testConfig } from "../support/TestApp.ts"

const database = DatabaseLive.pipe(Layer.provide(testConfig()))
const storage = SqlRunnerStorage.layer.pipe(Layer.provide(ShardingConfig.layer()), Layer.provideMerge(database))

describe("runner heartbeat", () => {
  it.live.skipIf(usesEmbeddedDatabase)("a refresh of a runner's shards checks them every time and writes its heartbeat at most once a second", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const runners = yield* RunnerStorage.RunnerStorage
      const address = RunnerAddress.make("127.0.0.1", 34567)
      const shard = ShardId.make("default", 1)
      yield* runners.register(Runner.make({ address, groups: ["default"], weight: 1 }), true)
      expect(yield* runners.acquire(address, [shard])).toEqual([shard])
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
})
