/**
 * The workflow engine's interrupts and wakes (`ClusterWorkflowEngine` of effect/cluster, as
 * patched: docs/dependencies.md). As shipped, every activation of a workflow (every turn's start)
 * first reads whether an interrupt was stored for it, and every suspension reads it again;
 * patched, it reads that the first time a run starts an activity or suspends, so a run that does
 * neither (a turn without tool calls) reads nothing, and one that waits several times (a turn
 * with several tool calls) reads it once. An interrupt still stops a workflow: sent to its owner,
 * and stored by an owner that stopped before it applied it. A wake of a waiting workflow (a
 * deferred done: a tool call's result) resets its run without looking the run or its reply up
 * again: the run is the activation's current one, and its reply is the one the wake waited for.
 * The run it reset is delivered again at once, not found by a read of new messages.
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
  /**
   * Stops the owner at the first reset of a run's replies (the interrupt's reset of the run), as if
   * its process had stopped right after it: the reset never returns, and `deaf` turns on.
   */
  stopAfterReset: boolean
}

const probeStorage = (probe: StorageProbe) =>
  storageWith((storage) => ({
    requestIdForPrimaryKey: (options) => {
      probe.lookedUp.push(`${options.tag}/${options.id}`)
      return storage.requestIdForPrimaryKey(options)
    },
    clearReplies: (requestId, options) =>
      Effect.andThen(
        storage.clearReplies(requestId, options),
        (cleared) => {
          if (!probe.stopAfterReset) return Effect.succeed(cleared)
          probe.deaf = true
          return Effect.never
        }
      ),
    unprocessedMessages: (shardIds, options) =>
      Effect.suspend(() => probe.deaf ? Effect.succeed([]) : storage.unprocessedMessages(shardIds, options)),
    unprocessedMessagesById: (ids) =>
      Effect.suspend(() => probe.deaf ? Effect.succeed([]) : storage.unprocessedMessagesById(ids))
  }))

const Quick = Workflow.make("Quick", { payload: { id: Schema.String }, success: Schema.Number, idempotencyKey: ({ id }) => id })

const Gate = DurableDeferred.make("gate")
const Guarded = Workflow.make("Guarded", { payload: { id: Schema.String }, idempotencyKey: ({ id }) => id })

const SecondGate = DurableDeferred.make("second gate")
/** Waits on two gates in turn, as a turn with two tool calls waits on their results. */
const TwiceGuarded = Workflow.make("TwiceGuarded", { payload: { id: Schema.String }, idempotencyKey: ({ id }) => id })

/** The activities of `Guarded` that ran, by workflow id. */
const ran: Array<string> = []

const workflows = Layer.mergeAll(
  Quick.toLayer(() => Effect.succeed(42)),
  Guarded.toLayer(({ id }) =>
    Effect.gen(function*() {
      yield* Activity.make({ name: "first", execute: Effect.sync(() => ran.push(`${id}: first`)) })
      yield* DurableDeferred.await(Gate)
      yield* Activity.make({ name: "after", execute: Effect.sync(() => ran.push(`${id}: after`)) })
    })),
  TwiceGuarded.toLayer(({ id }) =>
    Effect.gen(function*() {
      yield* Activity.make({ name: "first", execute: Effect.sync(() => ran.push(`${id}: first`)) })
      yield* DurableDeferred.await(Gate)
      yield* Activity.make({ name: "second", execute: Effect.sync(() => ran.push(`${id}: second`)) })
      yield* DurableDeferred.await(SecondGate)
      yield* Activity.make({ name: "after", execute: Effect.sync(() => ran.push(`${id}: after`)) })
    }))
)

/** One owner of the workflows, as the server sets the engine up, its storage probed. */
const owner = (probe: StorageProbe) => workflowOwner(workflows, probeStorage(probe))

const newProbe = (): StorageProbe => ({ lookedUp: [], deaf: false, stopAfterReset: false })

/** Runs `effect` with a new owner, stopped when `effect` ends. */
const withOwner = <A, E, R>(probe: StorageProbe, effect: Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.flatMap(Layer.build(owner(probe)), (context) => Effect.provideContext(effect, context)))

const database = MigrationsLive.pipe(Layer.provideMerge(DatabaseLive), Layer.provide(testConfig()))

const INTERRUPT_LOOKUP = "deferred/Workflow/InterruptSignal"

const guardedResult = (id: string) =>
  Effect.flatMap(Guarded.executionId({ id }), (executionId) => Guarded.poll(executionId))

const twiceGuardedResult = (id: string) =>
  Effect.flatMap(TwiceGuarded.executionId({ id }), (executionId) => TwiceGuarded.poll(executionId))

/** Opens `gate` of the waiting execution `executionId` of `workflowName`. */
const open = (gate: DurableDeferred.DurableDeferred<typeof Schema.Void>, workflowName: string, executionId: string) =>
  Effect.flatMap(WorkflowEngine.WorkflowEngine, (engine) =>
    engine.deferredDone(gate, { workflowName, executionId, deferredName: gate.name, exit: Exit.void }))

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

/** Waits until the activity `name` of the workflow `id` has run. */
const activityRan = (id: string, name: string) =>
  eventually(Effect.sync(() => activitiesOf(id)), (entries) => entries.includes(`${id}: ${name}`), `the activity ${name} of ${id} to run`)

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
          // The interrupt is stored and the run reset, then this owner stops: the replay is left
          // to the next owner, which has not seen the interrupt arrive.
          first.stopAfterReset = true
          yield* Guarded.interrupt(executionId)
          yield* eventually(Effect.sync(() => first.deaf), (deaf) => deaf, "the interrupt to reset the run")
          // The gate opens too, so a replay that did not know of the interrupt would start "after".
          yield* open(Gate, Guarded._tag, executionId)
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

  it.live("a workflow that waits twice looks a stored interrupt up once; an interrupt at its second wait stops it", () =>
    Effect.gen(function*() {
      const probe = newProbe()
      yield* withOwner(
        probe,
        Effect.gen(function*() {
          const executionId = yield* TwiceGuarded.execute({ id: "twice-1" }, { discard: true })
          yield* eventually(twiceGuardedResult("twice-1"), isSuspended, "the workflow to wait on its first gate")
          yield* open(Gate, TwiceGuarded._tag, executionId)
          yield* activityRan("twice-1", "second")
          yield* eventually(twiceGuardedResult("twice-1"), isSuspended, "the workflow to wait on its second gate")
          yield* TwiceGuarded.interrupt(executionId)
          yield* eventually(twiceGuardedResult("twice-1"), isInterrupted, "the workflow to be interrupted")
        })
      )
      expect(activitiesOf("twice-1")).toEqual(["twice-1: first", "twice-1: second"])
      expect(probe.lookedUp.filter((lookUp) => lookUp === INTERRUPT_LOOKUP)).toHaveLength(1)
    }).pipe(Effect.provide(database)), 60_000)
})

describe("the workflow engine's wakes", () => {
  it.live("a deferred done wakes its waiting workflow without a look-up of the run", () =>
    Effect.gen(function*() {
      const probe = newProbe()
      yield* withOwner(
        probe,
        Effect.gen(function*() {
          const executionId = yield* startWaiting("woken-1")
          probe.lookedUp.length = 0
          yield* open(Gate, Guarded._tag, executionId)
          yield* activityRan("woken-1", "after")
        })
      )
      expect(activitiesOf("woken-1")).toEqual(["woken-1: first", "woken-1: after"])
      expect(probe.lookedUp.filter((lookUp) => lookUp.startsWith("run/"))).toEqual([])
    }).pipe(Effect.provide(database)), 60_000)

  it.live("a woken workflow's run is delivered again without a read of new messages", () =>
    Effect.gen(function*() {
      const probe = newProbe()
      yield* withOwner(
        probe,
        Effect.gen(function*() {
          const executionId = yield* startWaiting("redelivered-1")
          // From here on the owner's reads of new messages find none: only a delivery of the reset
          // run without one replays the workflow.
          probe.deaf = true
          yield* open(Gate, Guarded._tag, executionId)
          yield* activityRan("redelivered-1", "after")
        })
      )
      expect(activitiesOf("redelivered-1")).toEqual(["redelivered-1: first", "redelivered-1: after"])
    }).pipe(Effect.provide(database)), 60_000)
})
