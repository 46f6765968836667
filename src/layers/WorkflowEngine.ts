/**
 * The durable workflow engine (ARCHITECTURE.md 5): `@effect/cluster` on a single runner, its
 * messages and workflow journal in the application's own database (tables `cluster_*`), so a
 * restarted process resumes every unfinished workflow from where it stopped. docs/runtime.md
 * explains the choices below.
 *
 * - Runner storage is in memory: with one runner per database every shard belongs to this
 *   process, and the SQL runner storage would hold a reserved connection forever for its shard
 *   locks, which the one-connection pool of the embedded PGlite cannot spare.
 * - The storage poll runs every 100 ms instead of every 10 s: a workflow resumed through a
 *   `DurableDeferred` resolved from an HTTP handler (a custom tool result, an approval) wakes on
 *   that poll, and a turn should not wait seconds for it.
 */
import { ClusterWorkflowEngine, SingleRunner } from "@effect/cluster"
import type { ShardingConfig } from "@effect/cluster"
import { Duration, Layer } from "effect"

export const workflowShardingConfig: Partial<ShardingConfig.ShardingConfig["Type"]> = {
  entityMessagePollInterval: Duration.millis(100),
  entityReplyPollInterval: Duration.millis(50),
  refreshAssignmentsInterval: Duration.millis(500)
}

/** `WorkflowEngine` over the `SqlClient` of the application. */
export const WorkflowEngineLive = ClusterWorkflowEngine.layer.pipe(
  Layer.provide(SingleRunner.layer({ runnerStorage: "memory", shardingConfig: workflowShardingConfig })),
  Layer.orDie
)
