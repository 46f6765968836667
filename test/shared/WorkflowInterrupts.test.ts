/**
 * The workflow engine's interrupts (`ClusterWorkflowEngine` of effect/cluster, as patched:
 * docs/dependencies.md). As shipped, every activation of a workflow (every turn's start) first
 * reads whether an interrupt was stored for it; patched, it reads that the first time a run
 * starts an activity, so a run that starts none (a turn) reads nothing. An interrupt still stops
 * a workflow: sent to its owner, and stored by an owner that stopped before it applied it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Schema } from "effect"
import { Activity, DurableDeferred, Workflow, WorkflowEngine } from "effect/workflow"
import { DatabaseLive } from "../../src/layers/Database.ts"
import { MigrationsLive } from "../../src/layers/Migrations.ts"
import { eventually } from "../support/Polling.ts"
import { testConfig } from "../support/TestApp.ts"
import { storageWith, workflowOwner } from "../support/WorkflowOwner.ts"

/** What the engine asked its storage for, and a switch that hides new messages from it. */
interface StorageProbe {
  /** The `tag/id` of every request the engine looked up by primary key. */
  readonly lookedUp: Array<string>
  /** Once true, the engine's reads of new messages find none, as if its process had stopped reading. */
  deaf: boolean
  /** Turns `deaf` on at the first reset of a run's replies (the interrupt's reset of the run). */
  deafAfterReset: boolean
}

const probeStorage = (probe: StorageProbe) =>
  storageWith((storage) => ({
    requestIdForPrimaryKey: (options) => {
      probe.lookedUp.push(`${options.tag}/${options.id}`)
      return storage.requestIdForPrimaryKey(options)
    },
    clearReplies: (requestId, options) =>
      Effect.tap(storage.clearReplies(requestId, options), () =>
        Effect.sync(() => {
          if (probe.deafAfterReset) probe.deaf = true
        })),
    unprocessedMessages: (shardIds, options) =>
      Effect.suspend(() => probe.deaf ? Effect.succeed([]) : storage.unprocessedMessages(shardIds, options)),
    unprocessedMessagesById: (ids) =>
      Effect.suspend(() => probe.deaf ? Effect.succeed([]) : storage.unprocessedMessagesById(ids))
  }))

const Quick = Workflow.make("Quick", { payload: { id: Schema.String }, success: Schema.Number, idempotencyKey: ({ id }) => id })

const Gate = DurableDeferred.make("gate")
const Guarded = Workflow.make("Guarded", { payload: { id: Schema.String }, idempotencyKey: ({ id }) => id })

/** The activities of `Guarded` that ran, by workflow id. */
const ran: Array<string> = []

const workflows = Layer.mergeAll(
  Quick.toLayer(() => Effect.succeed(42)),
  Guarded.toLayer(({ id }) =>
    Effect.gen(function*() {
      yield* Activity.make({ name: "first", execute: Effect.sync(() => ran.push(`${id}: first`)) })
      yield* DurableDeferred.await(Gate)
      yield* Activity.make({ name: "after", execute: Effect.sync(() => ran.push(`${id}: after`)) })
    }))
)

/** One owner of the workflows, as the server sets the engine up, its storage probed. */
const owner = (probe: StorageProbe) => workflowOwner(workflows, probeStorage(probe))

const newProbe = (): StorageProbe => ({ lookedUp: [], deaf: false, deafAfterReset: false })

/** Runs `effect` with a new owner, stopped when `effect` ends. */
const withOwner = <A, E, R>(probe: StorageProbe, effect: Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.flatMap(Layer.build(owner(probe)), (context) => Effect.provideContext(effect, context)))

const database = MigrationsLive.pipe(Layer.provideMerge(DatabaseLive), Layer.provide(testConfig()))

const INTERRUPT_LOOKUP = "deferred/Workflow/InterruptSignal"

const guardedResult = (id: string) =>
  Effect.flatMap(Guarded.executionId({ id }), (executionId) => Guarded.poll(executionId))

const isSuspended = (result: Option.Option<Workflow.Result<void, never>>) =>
  Option.isSome(result) && result.value._tag === "Suspended"

const isInterrupted = (result: Option.Option<Workflow.Result<void, never>>) =>
  Option.isSome(result) && result.value._tag === "Complete" && Exit.isFailure(result.value.exit) &&
  Cause.hasInterrupts(result.value.exit.cause)

/** Starts `Guarded` and waits until it waits on its gate, its first activity done; its execution id. */
const startWaiting = (id: string) =>
  Effect.tap(
    Guarded.execute({ id }, { discard: true }),
    () => eventually(guardedResult(id), isSuspended, "the workflow to wait on its gate")
  )

const activitiesOf = (id: string) => ran.filter((entry) => entry.startsWith(`${id}:`))

describe("the workflow engine's interrupts", () => {
  it.live("a workflow that starts no activity runs without a look-up of a stored interrupt", () =>
    Effect.gen(function*() {
      const probe = newProbe()
      const result = yield* withOwner(probe, Quick.execute({ id: "quick-1" }))
      expect(result).toBe(42)
      expect(probe.lookedUp).not.toContain(INTERRUPT_LOOKUP)
    }).pipe(Effect.provide(database)), 60_000)

  it.live("an interrupt sent to a waiting workflow stops it; its replay starts no new activity", () =>
    Effect.gen(function*() {
      const probe = newProbe()
      yield* withOwner(
        probe,
        Effect.gen(function*() {
          const executionId = yield* startWaiting("sent-1")
          yield* Guarded.interrupt(executionId)
          yield* eventually(guardedResult("sent-1"), isInterrupted, "the workflow to be interrupted")
        })
      )
      expect(activitiesOf("sent-1")).toEqual(["sent-1: first"])
    }).pipe(Effect.provide(database)), 60_000)

  it.live("an interrupt stored by an owner that stopped before it replayed the workflow stops it at the next owner", () =>
    Effect.gen(function*() {
      const first = newProbe()
      yield* withOwner(
        first,
        Effect.gen(function*() {
          const executionId = yield* startWaiting("stored-1")
          // The interrupt is stored and the run reset, then this owner reads no new message: the
          // replay is left to the next owner, which has not seen the interrupt arrive.
          first.deafAfterReset = true
          yield* Guarded.interrupt(executionId)
          yield* eventually(Effect.sync(() => first.deaf), (deaf) => deaf, "the interrupt to reset the run")
          // The gate opens too, so a replay that did not know of the interrupt would start "after".
          const engine = yield* WorkflowEngine.WorkflowEngine
          yield* engine.deferredDone(Gate, { workflowName: Guarded._tag, executionId, deferredName: Gate.name, exit: Exit.void })
        })
      )

      const next = newProbe()
      yield* withOwner(
        next,
        eventually(guardedResult("stored-1"), isInterrupted, "the next owner to apply the interrupt")
      )
      expect(activitiesOf("stored-1")).toEqual(["stored-1: first"])
      expect(next.lookedUp).toContain(INTERRUPT_LOOKUP)
    }).pipe(Effect.provide(database)), 60_000)
})
