/**
 * The durable workflow engine (ARCHITECTURE.md 5): `@effect/cluster` on a single runner, its
 * messages and workflow journal in the application's own database (tables `cluster_*`), so a
 * restarted process resumes every unfinished workflow from where it stopped. docs/runtime.md
 * explains the choices below.
 *
 * - Runner storage is in memory: with one runner per database every shard belongs to this
 *   process, and the SQL runner storage would hold a reserved connection forever for its shard
 *   locks, which the one-connection pool of the embedded PGlite cannot spare.
 * - Storage is polled every 500 ms instead of every 10 s, so work that reaches this runner only
 *   through the database (written while an entity was starting or stopping) waits at most half
 *   a second. Messages sent within the process, such as `DurableDeferred.succeed` from an HTTP
 *   handler, are delivered at once either way.
 * - Shutdown waits 2 s (not 15 s) for running workflows to stop; one still running then is
 *   resumed from its journal at the next start, exactly as after a crash.
 */
import { ClusterWorkflowEngine, SingleRunner } from "@effect/cluster"
import type { ShardingConfig } from "@effect/cluster"
import { Duration, Layer } from "effect"

export const workflowShardingConfig: Partial<ShardingConfig.ShardingConfig["Type"]> = {
  entityMessagePollInterval: Duration.millis(500),
  entityReplyPollInterval: Duration.millis(100),
  entityTerminationTimeout: Duration.seconds(2)
}

/** `WorkflowEngine` over the `SqlClient` of the application. */
export const WorkflowEngineLive = ClusterWorkflowEngine.layer.pipe(
  Layer.provide(SingleRunner.layer({ runnerStorage: "memory", shardingConfig: workflowShardingConfig })),
  Layer.orDie
)
