/**
 * The workflow engine's delivery of a message to a workflow of its own process (`Sharding` of
 * effect/cluster, as patched: docs/dependencies.md). As shipped, a message stored for a local
 * workflow reaches it only through the engine's next read of new messages from its storage; patched,
 * it is handed to the workflow as soon as it is stored, and the storage read is left for what this
 * process did not send (a restart's unfinished messages, another process's, a duplicate). Here the
 * owner's reads of new messages find nothing, so only a message delivered as it is stored arrives.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Workflow } from "effect/workflow"
import { DatabaseLive } from "../../src/layers/Database.ts"
import { MigrationsLive } from "../../src/layers/Migrations.ts"
import { testConfig } from "../support/TestApp.ts"
import { storageWith, workflowOwner } from "../support/WorkflowOwner.ts"

/** Once `deaf` is set, the engine's reads of new messages from its storage find none. */
interface StorageSwitch {
  deaf: boolean
}

const switchedStorage = (storageSwitch: StorageSwitch) =>
  storageWith((storage) => ({
    unprocessedMessages: (shardIds, options) =>
      Effect.suspend(() => storageSwitch.deaf ? Effect.succeed([]) : storage.unprocessedMessages(shardIds, options))
  }))

const Doubled = Workflow.make("Doubled", { payload: { n: Schema.Number }, success: Schema.Number, idempotencyKey: ({ n }) => String(n) })

const Counted = Workflow.make("Counted", { payload: { n: Schema.Number }, success: Schema.Number, idempotencyKey: ({ n }) => String(n) })
/** The payloads `Counted` ran with, once per run. */
const runs: Array<number> = []
const counts = Array.from({ length: 50 }, (_, n) => n)

const workflows = Layer.mergeAll(
  Doubled.toLayer(({ n }) => Effect.succeed(n * 2)),
  Counted.toLayer(({ n }) => Effect.sync(() => (runs.push(n), n)))
)

const owner = (storageSwitch: StorageSwitch) => workflowOwner(workflows, switchedStorage(storageSwitch))

/**
 * Runs `effect` with a new owner, stopped when `effect` ends. The owner first runs a workflow with
 * its storage read as shipped (until its shards are acquired, a message is left to the storage
 * read), then the storage is made deaf for `effect`.
 */
const withDeafOwner = <A, E, R>(effect: Effect.Effect<A, E, R>) => {
  const storageSwitch: StorageSwitch = { deaf: false }
  return Effect.scoped(Effect.flatMap(Layer.build(owner(storageSwitch)), (context) =>
    Effect.provideContext(
      Doubled.execute({ n: 0 }).pipe(
        Effect.andThen(Effect.sync(() => (storageSwitch.deaf = true))),
        Effect.andThen(effect)
      ),
      context
    )))
}

const database = MigrationsLive.pipe(Layer.provideMerge(DatabaseLive), Layer.provide(testConfig()))

describe("a message to a workflow of this process", () => {
  it.live("is delivered as it is stored: workflows run and answer while every read of new messages finds none", () =>
    Effect.gen(function*() {
      const results = yield* withDeafOwner(
        // Without the delivery as stored, nothing ever answers.
        Effect.timeout(Effect.forEach([1, 2, 3], (n) => Doubled.execute({ n }), { concurrency: "unbounded" }), "20 seconds")
      )
      expect(results).toEqual([2, 4, 6])
    }).pipe(Effect.provide(database)), 60_000)

  it.live("with the storage read as shipped besides, each of 50 workflows started at once runs once", () =>
    Effect.gen(function*() {
      const storageSwitch: StorageSwitch = { deaf: false }
      const results = yield* Effect.scoped(Effect.flatMap(Layer.build(owner(storageSwitch)), (context) =>
        Effect.provideContext(Effect.forEach(counts, (n) => Counted.execute({ n }), { concurrency: "unbounded" }), context)))
      expect(results).toEqual(counts)
      expect(runs.toSorted((a, b) => a - b)).toEqual(counts)
    }).pipe(Effect.provide(database)), 60_000)
})
