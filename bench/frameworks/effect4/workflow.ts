/**
 * The durable workflow's round trip of ../effect3/workflow.ts on Effect 4 (its own packages:
 * package.json here). Run as a child process: DATABASE_URL from the environment.
 */
import { NodeCrypto } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted, References, Schema } from "effect"
import { ClusterWorkflowEngine, SingleRunner } from "effect/cluster"
import { SqlClient } from "effect/sql"
import { Activity, Workflow } from "effect/workflow"
import { randomUUID } from "node:crypto"

const MEASURED_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 10)
const WARM_UP_SECONDS = 3
const FIBERS = 10

const Step = Workflow.make("Step", {
  payload: { id: Schema.String },
  success: Schema.Number,
  idempotencyKey: ({ id }) => id
})

const StepLive = Step.toLayer(({ id }) =>
  Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
    Activity.make({
      name: "insert",
      success: Schema.Number,
      execute: Effect.orDie(Effect.map(sql`INSERT INTO steps (id) VALUES (${id}) RETURNING id`, (rows) => rows.length))
    })))

/** Workflows run by FIBERS fibers back to back until `seconds` have passed. */
const runFor = (seconds: number) => {
  let completed = 0
  const deadline = Date.now() + seconds * 1000
  return Effect.map(
    Effect.all(
      Array.from({ length: FIBERS }, () =>
        Effect.whileLoop({
          while: () => Date.now() < deadline,
          body: () => Step.execute({ id: randomUUID() }),
          step: () => void completed++
        })),
      { concurrency: "unbounded" }
    ),
    () => completed
  )
}

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS steps (id text PRIMARY KEY)`
  yield* runFor(WARM_UP_SECONDS)
  const before = process.cpuUsage()
  const workflows = yield* runFor(MEASURED_SECONDS)
  const cpu = process.cpuUsage(before)
  console.log(JSON.stringify({ workflows, seconds: MEASURED_SECONDS, cpuMicroseconds: cpu.user + cpu.system }))
})

const EngineLive = ClusterWorkflowEngine.layer.pipe(
  Layer.provideMerge(SingleRunner.layer({
    runnerStorage: "memory",
    shardingConfig: { entityMessagePollInterval: Duration.millis(500), entityReplyPollInterval: Duration.millis(100) }
  }))
)

await Effect.runPromise(program.pipe(
  Effect.provide(StepLive),
  Effect.provide(EngineLive),
  Effect.provide(NodeCrypto.layerDigest),
  Effect.provide(PgClient.layer({ url: Redacted.make(process.env.DATABASE_URL!), maxConnections: 10 })),
  Effect.provide(Layer.succeed(References.TracerEnabled)(false))
))
