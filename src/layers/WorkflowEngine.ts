/**
 * The durable workflow engine (docs/runtime.md): `effect/workflow` on `effect/cluster`, its
 * messages and workflow journals in the application's own database (tables `cluster_*`), so a
 * restarted process, or another one, resumes every unfinished workflow from where it stopped.
 *
 * - Embedded PGlite: ONE process (its data directory lock) with `SingleRunner` and runner storage
 *   in memory: every shard belongs to this process, and the SQL runner storage would hold a
 *   reserved connection forever for its shard locks, which PGlite's one-connection pool cannot
 *   spare.
 * - Postgres: every process is a runner of one cluster (src/layers/cluster/SocketRunnerCluster.ts,
 *   docs/scale-out.md): shards spread over the processes, a workflow runs on the process that holds
 *   its shard, and a dead process's shards move to the others.
 *
 * Timing, for both (docs/runtime.md, "Timing"): storage is polled every 500 ms instead of 10 s, so
 * work that reaches a runner only through the database waits at most half a second; shutdown waits
 * 2 s (not 15 s) for running workflows, one still running then is resumed from its journal, as
 * after a crash; a turn's entity leaves memory 15 s (not a minute) after its last message.
 * Between processes (docs/scale-out.md, "When a process dies"): runners re-read the runner list
 * every second, the health check pings the other runners every 2 s, and a runner that stopped
 * refreshing its registration for 10 s counts as gone.
 */
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { ClusterWorkflowEngine, SingleRunner } from "effect/cluster"
import type { ShardingConfig } from "effect/cluster"
import { Duration, Effect, Layer, Option } from "effect"
import { AppConfig } from "./AppConfig.ts"
import { socketRunnerCluster } from "./cluster/SocketRunnerCluster.ts"

type ShardingSettings = Partial<ShardingConfig.ShardingConfig["Service"]>

export const workflowShardingConfig: ShardingSettings = {
  entityMessagePollInterval: Duration.millis(500),
  entityReplyPollInterval: Duration.millis(100),
  entityTerminationTimeout: Duration.seconds(2),
  entityMaxIdleTime: Duration.seconds(15)
}

/** How fast a dead process's shards move to the others (docs/scale-out.md, "When a process dies"). */
const clusterShardingConfig: ShardingSettings = {
  ...workflowShardingConfig,
  refreshAssignmentsInterval: Duration.seconds(1),
  runnerHealthCheckInterval: Duration.seconds(2),
  shardLockExpiration: Duration.seconds(10)
}

const singleRunner = SingleRunner.layer({ runnerStorage: "memory", shardingConfig: workflowShardingConfig })

/** `WorkflowEngine`, and the `Sharding` under it (for cluster singletons), over the application's `SqlClient`. */
export const WorkflowEngineLive = Layer.unwrap(Effect.map(AppConfig, (config) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(
      Option.isSome(config.databaseUrl) ? socketRunnerCluster(clusterShardingConfig) : singleRunner
    ),
    // The message storage hashes a message id longer than its column with it.
    Layer.provide(NodeCrypto.layerDigest)
  )))
