/**
 * The pruning of finished turns' workflow journals (docs/runtime.md, "Pruning the engine's
 * tables"). The cluster keeps every message of a workflow execution and its replies in
 * `cluster_messages` and `cluster_replies` for ever; a finished turn's are read by nothing: recovery
 * asks only about unfinished turns, and a resolution sent to a finished turn's workflow finds no
 * suspended run to resume. So the rows of a turn's execution are deleted JOURNAL_RETENTION after the
 * turn ended, or, when the turn is gone with its project, JOURNAL_RETENTION after its run was sent.
 *
 * An execution is pruned only when its `run` message is processed: the engine marks it so in the
 * transaction that saves the run's reply, so nothing the engine is still writing is deleted. The
 * execution is tied to its turn through the `turn_id` of the run message's payload; a payload
 * without one (another version of the engine) is never pruned.
 */
import { MachineId, Singleton, Snowflake } from "effect/cluster"
import { SqlClient, SqlSchema } from "effect/sql"
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { AppConfig } from "../../layers/AppConfig.ts"
import { withStartupLock } from "../../layers/StartupLock.ts"
import { turnEntityType } from "./TurnWorkflow.ts"

/** How long a finished turn's journal is kept (for a look at it when something went wrong). */
export const JOURNAL_RETENTION = Duration.hours(1)

/** How often the cluster's singleton prunes. */
const PRUNING_INTERVAL = Duration.minutes(5)

/** Executions pruned by one statement: a backlog is pruned in statements of this size. */
const BATCH_SIZE = 500

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  // An execution's messages are deleted by their entity, which the cluster does not index. The
  // cluster creates its tables after our migrations, so the index is made here, after them, one
  // process at a time; building it on a large table holds the table's writes that long, once.
  yield* withStartupLock(sql`CREATE INDEX IF NOT EXISTS cluster_messages_entity_idx ON cluster_messages (entity_id)`)
    .pipe(Effect.orDie)

  /**
   * Up to BATCH_SIZE executions whose turn ended before the cutoff, or is gone; how many.
   * A run message is sent after its turn's row is committed, so one made after the cutoff (its
   * id, a snowflake, carries the time) belongs to a turn that cannot have ended before it: only
   * the messages older than the cutoff are read, through the primary key.
   */
  const pruneBatchBefore = SqlSchema.findOne({
    Request: Schema.Date,
    Result: Schema.Struct({ executions: Schema.Int }),
    execute: (cutoff) => {
      const cutoffId = Snowflake.make({ timestamp: cutoff.getTime(), machineId: MachineId.make(0), sequence: 0 })
      return sql`
        WITH finished AS (
          SELECT m.entity_id FROM cluster_messages m
          LEFT JOIN turns t ON t.id = m.payload::jsonb ->> 'turn_id'
          WHERE m.id < ${String(cutoffId)}::bigint
            AND m.entity_type = ${turnEntityType} AND m.tag = 'run' AND m.processed
            AND m.payload::jsonb ? 'turn_id'
            AND (t.id IS NULL OR t.completed_at < ${cutoff})
          LIMIT ${BATCH_SIZE}
        ), messages AS (
          DELETE FROM cluster_messages m USING finished
          WHERE m.entity_type = ${turnEntityType} AND m.entity_id = finished.entity_id
          RETURNING m.id
        ), replies AS (
          DELETE FROM cluster_replies r USING messages WHERE r.request_id = messages.id
        )
        SELECT count(*)::int AS executions FROM finished`
    }
  })
  const pruneBatch = (retention: Duration.Duration) =>
    Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => pruneBatchBefore(new Date(now - Duration.toMillis(retention)))),
      Effect.map((row) => row.executions)
    )

  /**
   * On Postgres, autovacuum makes the deleted rows' space reusable. The embedded database has no
   * autovacuum: without a VACUUM its tables would grow as if nothing had been deleted. It scans
   * the pages changed since the last one, tens of milliseconds here (docs/runtime.md).
   */
  const reclaimSpace = Option.isNone(config.databaseUrl)
    ? sql`VACUUM cluster_messages, cluster_replies`.pipe(Effect.asVoid)
    : Effect.void

  /** Prunes the executions of turns that ended before `retention` ago; how many. */
  const prune = (retention: Duration.Duration) =>
    Effect.gen(function*() {
      let pruned = 0
      let last = BATCH_SIZE
      while (last === BATCH_SIZE) {
        last = yield* pruneBatch(retention)
        pruned += last
      }
      return pruned
    }).pipe(
      Effect.tap((pruned) => pruned > 0 ? reclaimSpace : Effect.void),
      Effect.orDie
    )

  return { prune } as const
})

export class TurnJournalPruning extends Context.Service<TurnJournalPruning, Effect.Success<typeof make>>()("TurnJournalPruning") {
  static readonly layer = Layer.effect(this, make)
}

/** The pruning every PRUNING_INTERVAL, on the one process of the cluster that holds the singleton. */
export const TurnJournalPruningLive = Singleton.make(
  "AgentRuntime/TurnJournalPruning",
  Effect.flatMap(TurnJournalPruning, (pruning) => pruning.prune(JOURNAL_RETENTION)).pipe(
    Effect.tap((pruned) =>
      pruned > 0 ? Effect.logInfo(`Pruned the workflow journals of ${pruned} turns`) : Effect.void
    ),
    Effect.catchCause((cause) => Effect.logError("Pruning the workflow journals failed", cause)),
    Effect.delay(PRUNING_INTERVAL),
    Effect.forever
  )
).pipe(Layer.provideMerge(TurnJournalPruning.layer))
