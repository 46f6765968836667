/**
 * A database upgraded from the Effect 3 build (docs/effect4-migration.md, "Replies the engine
 * stored"; src/layers/migrations/0016_cluster_exits_effect4.ts). The rows below are what Effect 3
 * (effect 3.22.4, @effect/cluster 0.60.2, @effect/workflow 0.19.1) stored in `cluster_messages` and
 * `cluster_replies` for real workflows on its `ClusterWorkflowEngine` over Postgres: a success, a
 * void success (as the turn's), typed failures of a workflow and of an activity, a defect, a
 * Sequential and a Parallel cause, a suspension with a cause and one without, a deferred failed
 * from outside and the engine's void interrupt signal, an interrupted workflow (its cause a tree of
 * Sequential, Empty and Interrupt nodes), a defect holding NUL and an unpaired surrogate, and the
 * storage's own replies (`ReplyWithContext.fromDefect` and `.interrupt`, and an interrupt by a
 * composite fiber id). Effect 4's engine refuses them as they are; after the migration it reads
 * each to the outcome Effect 3 read from the same rows (the expectations below: same values, same
 * failures, same defects, same interrupting fibers).
 */
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Schema } from "effect"
import { ClusterWorkflowEngine, MessageStorage, Reply, SingleRunner, Snowflake } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { SqlClient } from "effect/sql"
import { DurableDeferred, Workflow, WorkflowEngine } from "effect/workflow"
import { DatabaseLive } from "../../src/layers/Database.ts"
import { MigrationsLive } from "../../src/layers/Migrations.ts"
import convertClusterExits from "../../src/layers/migrations/0016_cluster_exits_effect4.ts"
import { testConfig } from "../support/TestApp.ts"

interface V3Message {
  readonly id: string
  readonly entity_type: string
  readonly entity_id: string
  readonly shard_id: string
  readonly tag: string
  readonly message_id: string
  readonly payload: string
  readonly last_reply_id: string
}

interface V3Reply {
  readonly id: string
  readonly request_id: string
  readonly payload: string
}

// Dumped from Effect 3's tables (every message processed, so the engine below runs none of them again).
const v3Messages: ReadonlyArray<V3Message> = [
  {
    id: "253735827677380608", entity_type: "Workflow/Ok", entity_id: "50064839ad6529f3760f5f8e49eaf557", shard_id: "default:260", tag: "run",
    message_id: "Workflow/Ok/50064839ad6529f3760f5f8e49eaf557/run/",
    payload: String.raw`{"id":"ok-1"}`, last_reply_id: "253735828310720512"
  },
  {
    id: "253735828184891392", entity_type: "Workflow/Ok", entity_id: "50064839ad6529f3760f5f8e49eaf557", shard_id: "default:260", tag: "activity",
    message_id: "Workflow/Ok/50064839ad6529f3760f5f8e49eaf557/activity/double/1",
    payload: String.raw`{"name":"double","attempt":1}`, last_reply_id: "253735828226834432"
  },
  {
    id: "253735828377829376", entity_type: "Workflow/Void", entity_id: "7eaafd74c2a6a79530c92f306d6fc5a4", shard_id: "default:156", tag: "run",
    message_id: "Workflow/Void/7eaafd74c2a6a79530c92f306d6fc5a4/run/",
    payload: String.raw`{"id":"void-1"}`, last_reply_id: "253735828440743936"
  },
  {
    id: "253735828486881280", entity_type: "Workflow/Failing", entity_id: "f113ce1cf3b967d6022f0c2588ac3d37", shard_id: "default:63", tag: "run",
    message_id: "Workflow/Failing/f113ce1cf3b967d6022f0c2588ac3d37/run/",
    payload: String.raw`{"id":"failing-1"}`, last_reply_id: "253735828574961664"
  },
  {
    id: "253735828524630016", entity_type: "Workflow/Failing", entity_id: "f113ce1cf3b967d6022f0c2588ac3d37", shard_id: "default:63", tag: "activity",
    message_id: "Workflow/Failing/f113ce1cf3b967d6022f0c2588ac3d37/activity/explode/1",
    payload: String.raw`{"name":"explode","attempt":1}`, last_reply_id: "253735828558184448"
  },
  {
    id: "253735828604321792", entity_type: "Workflow/Dying", entity_id: "09c74c93b77e4160a8b82f1d6220718b", shard_id: "default:282", tag: "run",
    message_id: "Workflow/Dying/09c74c93b77e4160a8b82f1d6220718b/run/",
    payload: String.raw`{"id":"dying-1"}`, last_reply_id: "253735828637876224"
  },
  {
    id: "253735828679819264", entity_type: "Workflow/DyingUncaptured", entity_id: "dbc18d175f6db0e084fdbc7461efcf26", shard_id: "default:105", tag: "run",
    message_id: "Workflow/DyingUncaptured/dbc18d175f6db0e084fdbc7461efcf26/run/",
    payload: String.raw`{"id":"dying-uncaptured-1"}`, last_reply_id: "253735900000000001"
  },
  {
    id: "253735849676505088", entity_type: "Workflow/Sequential", entity_id: "4cd7b2b4ab09491ba9a8673638b4c1f0", shard_id: "default:4", tag: "run",
    message_id: "Workflow/Sequential/4cd7b2b4ab09491ba9a8673638b4c1f0/run/",
    payload: String.raw`{"id":"sequential-1"}`, last_reply_id: "253735849718448128"
  },
  {
    id: "253735849777168384", entity_type: "Workflow/Parallel", entity_id: "87339bf45dac664f4c3de66dfbebca61", shard_id: "default:90", tag: "run",
    message_id: "Workflow/Parallel/87339bf45dac664f4c3de66dfbebca61/run/",
    payload: String.raw`{"id":"parallel-1"}`, last_reply_id: "253735849814917120"
  },
  {
    id: "253735849840082944", entity_type: "Workflow/Suspending", entity_id: "29d2f563a0debeb9a46032adc8b55140", shard_id: "default:24", tag: "run",
    message_id: "Workflow/Suspending/29d2f563a0debeb9a46032adc8b55140/run/",
    payload: String.raw`{"id":"suspending-1"}`, last_reply_id: "253735849907191808"
  },
  {
    id: "253735870828380160", entity_type: "Workflow/Signalled", entity_id: "4dd6c745e525c911225e72c99661f15e", shard_id: "default:36", tag: "run",
    message_id: "Workflow/Signalled/4dd6c745e525c911225e72c99661f15e/run/",
    payload: String.raw`{"id":"signalled-1"}`, last_reply_id: "253735875517612032"
  },
  {
    id: "253735875068821504", entity_type: "Workflow/Signalled", entity_id: "4dd6c745e525c911225e72c99661f15e", shard_id: "default:36", tag: "deferred",
    message_id: "Workflow/Signalled/4dd6c745e525c911225e72c99661f15e/deferred/signal",
    payload: String.raw`{"name":"signal","exit":{"_tag":"Failure","cause":{"_tag":"Fail","error":{"reason":"signalled","_tag":"Boom"}}}}`, last_reply_id: "253735875270148096"
  },
  {
    id: "253735875135930368", entity_type: "Workflow/Interrupted", entity_id: "70ff1dac9e542c21f4a587ebe5927884", shard_id: "default:133", tag: "run",
    message_id: "Workflow/Interrupted/70ff1dac9e542c21f4a587ebe5927884/run/",
    payload: String.raw`{"id":"interrupted-1"}`, last_reply_id: "253735879636418560"
  },
  {
    id: "253735879460257792", entity_type: "Workflow/Interrupted", entity_id: "70ff1dac9e542c21f4a587ebe5927884", shard_id: "default:133", tag: "deferred",
    message_id: "Workflow/Interrupted/70ff1dac9e542c21f4a587ebe5927884/deferred/Workflow/InterruptSignal",
    payload: String.raw`{"name":"Workflow/InterruptSignal","exit":{"_tag":"Success"}}`, last_reply_id: "253735879548338176"
  },
  {
    id: "253736609009106944", entity_type: "Workflow/Waiting", entity_id: "f5e470d05693f2123fd4d474882c86bb", shard_id: "default:244", tag: "run",
    message_id: "Workflow/Waiting/f5e470d05693f2123fd4d474882c86bb/run/",
    payload: String.raw`{"id":"waiting-1"}`, last_reply_id: "253736609579532288"
  },
  {
    id: "253736700000000000", entity_type: "Workflow/Waiting", entity_id: "interrupted", shard_id: "default:244", tag: "run",
    message_id: "Workflow/Waiting/interrupted/run/",
    payload: String.raw`{"id":"waiting-2"}`, last_reply_id: "253735900000000002"
  },
  {
    id: "253736700000000010", entity_type: "Workflow/Waiting", entity_id: "nul", shard_id: "default:244", tag: "run",
    message_id: "Workflow/Waiting/nul/run/",
    payload: String.raw`{"id":"nul"}`, last_reply_id: "253735900000000003"
  },
  {
    id: "253736700000000020", entity_type: "Workflow/Waiting", entity_id: "composite", shard_id: "default:244", tag: "run",
    message_id: "Workflow/Waiting/composite/run/",
    payload: String.raw`{"id":"composite"}`, last_reply_id: "253735900000000004"
  },
  {
    id: "253737423400337408", entity_type: "Workflow/DyingNul", entity_id: "7a1e7aff9170e52ddc8280a93c524176", shard_id: "default:251", tag: "run",
    message_id: "Workflow/DyingNul/7a1e7aff9170e52ddc8280a93c524176/run/",
    payload: String.raw`{"id":"dying-nul-1"}`, last_reply_id: "253737424415358976"
  }
]

const v3Replies: ReadonlyArray<V3Reply> = [
  // Ok activity (50064839ad6529f3760f5f8e49eaf557)
  {
    id: "253735828226834432", request_id: "253735828184891392",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Success","value":42}}}`
  },
  // Ok run (50064839ad6529f3760f5f8e49eaf557)
  {
    id: "253735828310720512", request_id: "253735827677380608",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Success","value":42}}}`
  },
  // Void run (7eaafd74c2a6a79530c92f306d6fc5a4)
  {
    id: "253735828440743936", request_id: "253735828377829376",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Success"}}}`
  },
  // Failing activity (f113ce1cf3b967d6022f0c2588ac3d37)
  {
    id: "253735828558184448", request_id: "253735828524630016",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Failure","cause":{"_tag":"Fail","error":{"reason":"activity failed","_tag":"Boom"}}}}}`
  },
  // Failing run (f113ce1cf3b967d6022f0c2588ac3d37)
  {
    id: "253735828574961664", request_id: "253735828486881280",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Failure","cause":{"_tag":"Fail","error":{"reason":"activity failed","_tag":"Boom"}}}}}`
  },
  // Dying run (09c74c93b77e4160a8b82f1d6220718b)
  {
    id: "253735828637876224", request_id: "253735828604321792",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Failure","cause":{"_tag":"Die","defect":{"name":"Error","message":"kaput"}}}}}`
  },
  // Sequential run (4cd7b2b4ab09491ba9a8673638b4c1f0)
  {
    id: "253735849718448128", request_id: "253735849676505088",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Failure","cause":{"_tag":"Sequential","left":{"_tag":"Fail","error":{"reason":"first","_tag":"Boom"}},"right":{"_tag":"Die","defect":{"name":"Error","message":"then the finalizer died"}}}}}}`
  },
  // Parallel run (87339bf45dac664f4c3de66dfbebca61)
  {
    id: "253735849814917120", request_id: "253735849777168384",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Failure","cause":{"_tag":"Parallel","left":{"_tag":"Fail","error":{"reason":"left","_tag":"Boom"}},"right":{"_tag":"Die","defect":{"name":"Error","message":"right"}}}}}}`
  },
  // Suspending run (29d2f563a0debeb9a46032adc8b55140)
  {
    id: "253735849907191808", request_id: "253735849840082944",
    payload: String.raw`{"_tag":"Success","value":{"cause":{"_tag":"Die","defect":{"name":"Error","message":"suspend me"}},"_tag":"Suspended"}}`
  },
  // Signalled deferred (4dd6c745e525c911225e72c99661f15e)
  {
    id: "253735875270148096", request_id: "253735875068821504",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Failure","cause":{"_tag":"Fail","error":{"reason":"signalled","_tag":"Boom"}}}}`
  },
  // Signalled run (4dd6c745e525c911225e72c99661f15e)
  {
    id: "253735875517612032", request_id: "253735870828380160",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Failure","cause":{"_tag":"Fail","error":{"reason":"signalled","_tag":"Boom"}}}}}`
  },
  // Interrupted deferred (70ff1dac9e542c21f4a587ebe5927884)
  {
    id: "253735879548338176", request_id: "253735879460257792",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Success"}}`
  },
  // Interrupted run (70ff1dac9e542c21f4a587ebe5927884)
  {
    id: "253735879636418560", request_id: "253735875135930368",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Failure","cause":{"_tag":"Sequential","left":{"_tag":"Sequential","left":{"_tag":"Sequential","left":{"_tag":"Sequential","left":{"_tag":"Interrupt","fiberId":{"_tag":"Runtime","id":216,"startTimeMillis":1796184947881}},"right":{"_tag":"Sequential","left":{"_tag":"Empty"},"right":{"_tag":"Interrupt","fiberId":{"_tag":"Runtime","id":216,"startTimeMillis":1796184947881}}}},"right":{"_tag":"Sequential","left":{"_tag":"Empty"},"right":{"_tag":"Interrupt","fiberId":{"_tag":"Runtime","id":216,"startTimeMillis":1796184947881}}}},"right":{"_tag":"Sequential","left":{"_tag":"Empty"},"right":{"_tag":"Interrupt","fiberId":{"_tag":"Runtime","id":216,"startTimeMillis":1796184947881}}}},"right":{"_tag":"Sequential","left":{"_tag":"Empty"},"right":{"_tag":"Interrupt","fiberId":{"_tag":"Runtime","id":216,"startTimeMillis":1796184947881}}}}}}}`
  },
  // Waiting run (f5e470d05693f2123fd4d474882c86bb)
  {
    id: "253736609579532288", request_id: "253736609009106944",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Suspended"}}`
  },
  // DyingUncaptured run (dbc18d175f6db0e084fdbc7461efcf26)
  {
    id: "253735900000000001", request_id: "253735828679819264",
    payload: String.raw`{"_tag":"Failure","cause":{"_tag":"Die","defect":"{\"name\":\"Error\",\"message\":\"the reply could not be encoded\"}"}}`
  },
  // Waiting run (interrupted)
  {
    id: "253735900000000002", request_id: "253736700000000000",
    payload: String.raw`{"_tag":"Failure","cause":{"_tag":"Interrupt","fiberId":{"_tag":"None"}}}`
  },
  // Waiting run (nul)
  {
    id: "253735900000000003", request_id: "253736700000000010",
    payload: String.raw`{"_tag":"Failure","cause":{"_tag":"Die","defect":"{\"name\":\"Error\",\"message\":\"nul \\u0000 and a lone \\ud800 here\"}"}}`
  },
  // Waiting run (composite)
  {
    id: "253735900000000004", request_id: "253736700000000020",
    payload: String.raw`{"_tag":"Failure","cause":{"_tag":"Interrupt","fiberId":{"_tag":"Composite","left":{"_tag":"Runtime","id":7,"startTimeMillis":1700000000000},"right":{"_tag":"Composite","left":{"_tag":"None"},"right":{"_tag":"Runtime","id":9,"startTimeMillis":1700000000001}}}}}`
  },
  // DyingNul run (7a1e7aff9170e52ddc8280a93c524176)
  {
    id: "253737424415358976", request_id: "253737423400337408",
    payload: String.raw`{"_tag":"Success","value":{"_tag":"Complete","exit":{"_tag":"Failure","cause":{"_tag":"Die","defect":{"name":"Error","message":"nul \u0000 and a lone \ud800 here"}}}}}`
  }
]

class Boom extends Schema.TaggedError<Boom>()("Boom", { reason: Schema.String }) {}

// The workflows that wrote the rows, as Effect 4 declares them (same names and schemas).
const payload = { id: Schema.String }
const idempotencyKey = ({ id }: { readonly id: string }) => id
const Ok = Workflow.make("Ok", { payload, success: Schema.Number, idempotencyKey })
const Void = Workflow.make("Void", { payload, idempotencyKey })
const Failing = Workflow.make("Failing", { payload, error: Boom, idempotencyKey })
const Dying = Workflow.make("Dying", { payload, idempotencyKey })
const DyingUncaptured = Workflow.make("DyingUncaptured", { payload, idempotencyKey })
const Sequential = Workflow.make("Sequential", { payload, error: Boom, idempotencyKey })
const Parallel = Workflow.make("Parallel", { payload, error: Boom, idempotencyKey })
const Suspending = Workflow.make("Suspending", { payload, idempotencyKey })
const Signalled = Workflow.make("Signalled", { payload, success: Schema.String, error: Boom, idempotencyKey })
const Interrupted = Workflow.make("Interrupted", { payload, idempotencyKey })
const Waiting = Workflow.make("Waiting", { payload, idempotencyKey })
const DyingNul = Workflow.make("DyingNul", { payload, idempotencyKey })

// ClusterWorkflowEngine's activity RPC and its deferred RPC's payload, as the engine declares them
// (they are not exported): a replayed activity's stored reply is read with the first, a `deferred`
// message with the second.
const AnyOrVoid = Schema.Union([Schema.Undefined, Schema.Any])
const ActivityRpc = Rpc.make("activity", { success: Workflow.Result({ success: AnyOrVoid, error: AnyOrVoid }) })
const DeferredPayload = Schema.Struct({ name: Schema.String, exit: Schema.Exit(AnyOrVoid, AnyOrVoid, Schema.Any) })

// An outcome as Effect 3 read it: values, failures, defects (an Error by name and message), interruptions.
type Outcome = unknown
const defectOf = (defect: unknown) => defect instanceof Error ? { name: defect.name, message: defect.message } : defect
const failureOf = (error: unknown) => error instanceof Boom ? { Boom: error.reason } : error
const causeOf = (cause: Cause.Cause<unknown>) => ({
  failures: cause.reasons.filter(Cause.isFailReason).map((reason) => failureOf(reason.error)),
  defects: cause.reasons.filter(Cause.isDieReason).map((reason) => defectOf(reason.defect)),
  interrupted: cause.reasons.some(Cause.isInterruptReason),
  interruptors: [...Cause.interruptors(cause)].sort((a, b) => a - b)
})
const valueOf = (value: unknown): Outcome =>
  value instanceof Workflow.Complete
    ? { Complete: exitOf(value.exit) }
    : value instanceof Workflow.Suspended
    ? { Suspended: value.cause === undefined ? null : causeOf(value.cause) }
    : Exit.isExit(value)
    ? { Exit: exitOf(value) }
    : value
const exitOf = (exit: Exit.Exit<unknown, unknown>): Outcome =>
  Exit.isSuccess(exit) ? { success: valueOf(exit.value) } : { failure: causeOf(exit.cause) }

const failed = (failures: ReadonlyArray<unknown>, defects: ReadonlyArray<unknown> = []) => ({
  failure: { failures, defects, interrupted: false, interruptors: [] }
})
const interruptedBy = (interruptors: ReadonlyArray<number>) => ({
  failure: { failures: [], defects: [], interrupted: true, interruptors }
})
const error = (message: string) => ({ name: "Error", message })

/** A workflow's `run` reply, read by the engine's own `poll` (a reply that is a failure fails the poll with it). */
type Poll = Effect.Effect<Option.Option<Workflow.Result<unknown, unknown>>, never, WorkflowEngine.WorkflowEngine>
const polled = (workflow: { readonly _tag: string; readonly poll: (executionId: string) => Poll }, executionId: string) =>
  [`${workflow._tag} ${executionId}`, workflow.poll(executionId)] as const

const runs: ReadonlyArray<readonly [string, Poll, Outcome]> = [
  [...polled(Ok, "50064839ad6529f3760f5f8e49eaf557"), { success: { Complete: { success: 42 } } }],
  [...polled(Void, "7eaafd74c2a6a79530c92f306d6fc5a4"), { success: { Complete: { success: undefined } } }],
  [...polled(Failing, "f113ce1cf3b967d6022f0c2588ac3d37"), { success: { Complete: failed([{ Boom: "activity failed" }]) } }],
  [...polled(Dying, "09c74c93b77e4160a8b82f1d6220718b"), { success: { Complete: failed([], [error("kaput")]) } }],
  [...polled(Sequential, "4cd7b2b4ab09491ba9a8673638b4c1f0"), {
    success: { Complete: failed([{ Boom: "first" }], [error("then the finalizer died")]) }
  }],
  [...polled(Parallel, "87339bf45dac664f4c3de66dfbebca61"), {
    success: { Complete: failed([{ Boom: "left" }], [error("right")]) }
  }],
  [...polled(Suspending, "29d2f563a0debeb9a46032adc8b55140"), {
    success: { Suspended: failed([], [error("suspend me")]).failure }
  }],
  [...polled(Signalled, "4dd6c745e525c911225e72c99661f15e"), { success: { Complete: failed([{ Boom: "signalled" }]) } }],
  [...polled(Interrupted, "70ff1dac9e542c21f4a587ebe5927884"), { success: { Complete: interruptedBy([216]) } }],
  [...polled(Waiting, "f5e470d05693f2123fd4d474882c86bb"), { success: { Suspended: null } }],
  [...polled(DyingNul, "7a1e7aff9170e52ddc8280a93c524176"), {
    success: { Complete: failed([], [error("nul \u0000 and a lone \ud800 here")]) }
  }],
  // The storage's own replies: defects (Effect 3's Schema.Defect wrote the Error as a string), interrupts.
  [...polled(DyingUncaptured, "dbc18d175f6db0e084fdbc7461efcf26"), failed([], [
    String.raw`{"name":"Error","message":"the reply could not be encoded"}`
  ])],
  [...polled(Waiting, "nul"), failed([], [String.raw`{"name":"Error","message":"nul \u0000 and a lone \ud800 here"}`])],
  [...polled(Waiting, "interrupted"), interruptedBy([])],
  [...polled(Waiting, "composite"), interruptedBy([7, 9])]
]

/** Activity replies, by request id, read with the engine's activity RPC (an activity's error stays JSON). */
const activities: ReadonlyArray<readonly [string, Outcome]> = [
  ["253735828184891392", { success: { Complete: { success: 42 } } }],
  ["253735828524630016", { success: { Complete: failed([{ reason: "activity failed", _tag: "Boom" }]) } }]
]

/**
 * Deferreds: the reply the engine reads for the waiting workflow (decoded with the deferred's own
 * schemas), and the message that completed it (with the engine's, which keep the error as JSON).
 */
type DeferredResult = Effect.Effect<
  Option.Option<Exit.Exit<unknown, unknown>>,
  never,
  WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance
>
const resultOf = <Success extends Schema.Constraint, Error extends Schema.Constraint>(
  deferred: DurableDeferred.DurableDeferred<Success, Error>
): readonly [string, DeferredResult] =>
  [deferred.name, Effect.flatMap(WorkflowEngine.WorkflowEngine, (engine) => engine.deferredResult(deferred))]

const deferreds: ReadonlyArray<readonly [Workflow.Any, string, readonly [string, DeferredResult], Outcome, Outcome]> = [
  [
    Signalled,
    "4dd6c745e525c911225e72c99661f15e",
    resultOf(DurableDeferred.make("signal", { success: Schema.String, error: Boom })),
    failed([{ Boom: "signalled" }]),
    failed([{ reason: "signalled", _tag: "Boom" }])
  ],
  [
    Interrupted,
    "70ff1dac9e542c21f4a587ebe5927884",
    resultOf(DurableDeferred.make("Workflow/InterruptSignal")),
    { success: undefined },
    { success: undefined }
  ]
]

const database = MigrationsLive.pipe(Layer.provideMerge(DatabaseLive), Layer.provide(testConfig()))
// The engine over the same database (src/layers/WorkflowEngine.ts, embedded form); it creates the cluster's tables.
const engine = ClusterWorkflowEngine.layer.pipe(
  Layer.provideMerge(SingleRunner.layer({ runnerStorage: "memory" })),
  Layer.provide(NodeCrypto.layerDigest)
)

const insertV3Rows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const m of v3Messages) {
    yield* sql`
      INSERT INTO cluster_messages
        (id, message_id, shard_id, entity_type, entity_id, kind, tag, payload, headers, processed, request_id, last_reply_id)
      VALUES (${m.id}::bigint, ${m.message_id}, ${m.shard_id}, ${m.entity_type}, ${m.entity_id}, 0, ${m.tag}, ${m.payload},
        '{}', true, ${m.id}::bigint, ${m.last_reply_id}::bigint)`
  }
  for (const r of v3Replies) {
    yield* sql`
      INSERT INTO cluster_replies (id, kind, request_id, payload, acked)
      VALUES (${r.id}::bigint, 0, ${r.request_id}::bigint, ${r.payload}, false)`
  }
})

/** The migration as the migrator runs it: in a transaction. */
const migrate = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(convertClusterExits))

const storedPayloads = Effect.map(
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly id: string; readonly payload: string }>`
      SELECT id::text AS id, payload FROM cluster_replies
      UNION ALL SELECT id::text, payload FROM cluster_messages`),
  (rows) => new Map(rows.map((row) => [row.id, row.payload]))
)

const pollOutcome = (poll: Poll) =>
  Effect.map(Effect.exit(poll), (exit) =>
    Exit.isSuccess(exit)
      ? { success: Option.match(exit.value, { onNone: () => "not found", onSome: valueOf }) }
      : { failure: causeOf(exit.cause) })

const deferredOutcome = (workflow: Workflow.Any, executionId: string, result: DeferredResult) =>
  result.pipe(
    Effect.provideService(WorkflowEngine.WorkflowInstance, WorkflowEngine.WorkflowInstance.initial(workflow, executionId)),
    Effect.map(Option.match({ onNone: (): Outcome => "not found", onSome: exitOf }))
  )

const pollFailure = (poll: Poll) =>
  Effect.map(Effect.exit(poll), (exit) => Exit.isFailure(exit) ? String(Cause.squash(exit.cause)) : "read")

describe("the workflow engine's results stored by Effect 3, on Effect 4", () => {
  it.live("a new database (no cluster tables yet) is migrated; the conversion has nothing to do", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const applied = yield* sql<{ readonly name: string }>`SELECT name FROM effect_sql_migrations WHERE migration_id = 16`
      expect(applied).toEqual([{ name: "cluster_exits_effect4" }])
      yield* migrate
      const [{ present }] = yield* sql<{ readonly present: boolean }>`
        SELECT to_regclass('cluster_replies') IS NOT NULL AS present`
      expect(present).toBe(false)
    }).pipe(Effect.provide(database)), 60_000)

  it.live("Effect 4 refuses the rows as Effect 3 wrote them; after the migration it reads each as Effect 3 did", () =>
    Effect.gen(function*() {
      yield* insertV3Rows

      // Before: a failure's cause tree, and a success without value, are refused.
      expect(yield* pollFailure(Dying.poll("09c74c93b77e4160a8b82f1d6220718b"))).toContain("Expected array")
      expect(yield* pollFailure(Void.poll("7eaafd74c2a6a79530c92f306d6fc5a4"))).toContain("Missing key")

      const before = yield* storedPayloads
      yield* migrate

      for (const [label, poll, expected] of runs) {
        expect([label, yield* pollOutcome(poll)]).toEqual([label, expected])
      }

      const storage = yield* MessageStorage.MessageStorage
      const decodeActivityReply = Schema.decodeUnknownEffect(Schema.toCodecJson(Reply.WithExit.schema(ActivityRpc)))
      for (const [requestId, expected] of activities) {
        const [encoded] = yield* storage.repliesForUnfiltered([Snowflake.Snowflake(requestId)])
        const reply = yield* decodeActivityReply(encoded)
        expect([requestId, exitOf(reply.exit)]).toEqual([requestId, expected])
      }

      const sql = yield* SqlClient.SqlClient
      const decodeDeferredPayload = Schema.decodeUnknownEffect(Schema.toCodecJson(DeferredPayload))
      for (const [workflow, executionId, [name, result], read, sent] of deferreds) {
        expect([name, yield* deferredOutcome(workflow, executionId, result)]).toEqual([name, read])
        const [message] = yield* sql<{ readonly payload: string }>`
          SELECT payload FROM cluster_messages WHERE tag = 'deferred' AND entity_id = ${executionId}`
        const decoded = yield* decodeDeferredPayload(JSON.parse(message.payload))
        expect([name, exitOf(decoded.exit)]).toEqual([name, sent])
      }

      // What Effect 4 read already stays byte for byte: the messages but the two deferred ones, and
      // three replies (a success with its value, twice, and a suspension without cause).
      const after = yield* storedPayloads
      const unchanged = [...before.keys()].filter((id) => after.get(id) === before.get(id)).sort()
      expect(unchanged).toEqual([
        ...v3Messages.filter((m) => m.tag !== "deferred").map((m) => m.id),
        "253735828226834432",
        "253735828310720512",
        "253736609579532288"
      ].sort())
      // A second run changes nothing.
      yield* migrate
      expect(yield* storedPayloads).toEqual(after)
    }).pipe(Effect.provide(engine), Effect.provide(database), Effect.scoped), 60_000)
})
