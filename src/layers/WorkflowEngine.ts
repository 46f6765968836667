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
import { SqlClient } from "@effect/sql"
import { Data, Duration, Effect, Layer, Option } from "effect"
import { AppConfig } from "./AppConfig.ts"

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

export class RunnerAlreadyActive extends Data.TaggedError("RunnerAlreadyActive")<{
  readonly message: string
}> {}

/** A fixed key for the advisory lock below ("agent-platform runner"). */
const RUNNER_LOCK_KEY = 4_731_220_914

/**
 * One runner per database. On a real Postgres the process holds a session-level advisory lock on
 * a reserved connection for as long as it runs, so a second server started on the same database
 * stops at start-up with a clear message instead of claiming every shard as well. The lock ends
 * with the session, so a killed process never leaves it behind. (The embedded database is guarded
 * by its data directory lock: src/layers/Database.ts.)
 */
export const SingleRunnerLock = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isNone(config.databaseUrl)) return
    const sql = yield* SqlClient.SqlClient
    const connection = yield* Effect.orDie(sql.reserve)
    const [row] = yield* Effect.orDie(
      connection.execute("SELECT pg_try_advisory_lock($1) AS locked", [RUNNER_LOCK_KEY], undefined)
    )
    if (row?.locked !== true) {
      return yield* new RunnerAlreadyActive({
        message: "Another server process is running on this database. Run one server process per " +
          "database (docs/runtime.md): stop the other one, or give this one its own DATABASE_URL."
      })
    }
  })
)
