/**
 * The turn as a durable workflow (docs/runtime.md): one execution per turn,
 * keyed by the turn id, on effect/cluster with its journal in the application's database. What
 * the turn waits for from outside is a DurableDeferred named after the tool call it belongs to:
 *
 * - `approval/<tool call id>`: a person approves or denies a call whose tool asks first;
 * - `result/<tool call id>`: a client submits the result of a custom tool call;
 * - `question/<tool call id>`: a person answers (or declines) an `ask_question` call.
 *
 * Their tokens are stored on the tool_calls / interactions rows; TurnSignals resolves them.
 */
import { EntityAddress, EntityId, EntityType, MessageStorage, Sharding } from "effect/cluster"
import { DurableDeferred, Workflow, WorkflowEngine } from "effect/workflow"
import { Effect, Option, Schema } from "effect"
import { AgentId, ToolCallId, TurnId } from "../../domain/shared/Ids.ts"
import { sha256Hex } from "../shared/Hash.ts"

const AgentTurn = Workflow.make("AgentTurn", {
  payload: { turn_id: TurnId, agent_id: AgentId },
  idempotencyKey: (payload) => payload.turn_id
})

export type TurnPayload = typeof AgentTurn.payloadSchema.Type

/**
 * The execution id of a turn's workflow: the first 16 bytes of the SHA-256 of `AgentTurn-<turn id>`,
 * in hex, as the Effect 3 build derived it (@effect/workflow 0.19). Effect 4's Workflow hashes
 * `<tag length>:<tag>:<key>` instead; a turn's id must map to one execution id forever: the
 * executions, the `run`/`deferred` messages and the tokens on tool_calls / interactions rows of the
 * turns in flight when a deployment upgrades carry this one, and recovery asks for it
 * (`turnStarted`), so another id would start a second execution of such a turn (a second model
 * call for a step in flight) and leave it waiting for ever (docs/effect4-migration.md, "Turns in flight").
 */
export const turnExecutionId = (payload: { readonly turn_id: TurnId }): Effect.Effect<string> =>
  Effect.sync(() => sha256Hex(`${AgentTurn._tag}-${payload.turn_id}`).slice(0, 32))

/**
 * The turn workflow: `AgentTurn` whose `executionId` (so `DurableDeferred.tokenFromPayload` too) and
 * `execute` use `turnExecutionId`; `toLayer`, `poll`, `interrupt`, `resume` are AgentTurn's own. The
 * turn is only started from outside any workflow (TurnLauncher), never as a child of another one.
 * `annotate` would return a workflow without these two methods: annotate `AgentTurn` above instead.
 */
export const TurnWorkflow: typeof AgentTurn = Object.assign(
  // `Object.create` is typed `any`: the object inherits every member of AgentTurn but these two.
  Object.create(AgentTurn),
  {
    executionId: turnExecutionId,
    execute: <const Discard extends boolean = false>(
      payload: TurnPayload,
      options?: {
        readonly discard?: Discard | undefined
        readonly detached?: [Discard] extends [true] ? boolean | undefined : undefined
      }
    ) =>
      Effect.flatMap(turnExecutionId(payload), (executionId) =>
        Effect.flatMap(WorkflowEngine.WorkflowEngine, (engine) =>
          engine.execute(TurnWorkflow, {
            executionId,
            payload: AgentTurn.payloadSchema.make(payload),
            discard: options?.discard,
            detached: options?.detached
          }))).pipe(Effect.withSpan(`${AgentTurn._tag}.execute`, {}, { captureStackTrace: false }))
  } satisfies Pick<typeof AgentTurn, "executionId" | "execute">
)

/** A tool call of a step and what the turn waits for on it: first its approval (if any), then its result or answer. */
export const PlannedCall = Schema.Struct({
  tool_call_id: ToolCallId,
  approval: Schema.Boolean,
  then: Schema.Literals(["result", "question", "none"])
})
export type PlannedCall = typeof PlannedCall.Type

/** What a model call of a turn ended with, recorded in `turn_steps` (the step's journal). */
export const StepOutcome = Schema.Union([
  Schema.TaggedStruct("ToolCalls", { calls: Schema.Array(PlannedCall) }),
  Schema.TaggedStruct("Finished", {}),
  Schema.TaggedStruct("Failed", { error: Schema.String }),
  Schema.TaggedStruct("Stopped", {})
])
export type StepOutcome = typeof StepOutcome.Type

/** The outcomes without calls: the turn ended, was stopped (cancelled, gone), or failed with `error`. */
export const finishedStep: StepOutcome = { _tag: "Finished" }
export const stoppedStep: StepOutcome = { _tag: "Stopped" }
export const failedStep = (error: string): StepOutcome => ({ _tag: "Failed", error })

/** What resolves a wait: a decision on an approval, a completed call or answered question, or the turn's cancellation. */
export const TurnSignal = Schema.Literals(["approve", "deny", "completed", "cancelled"])
export type TurnSignal = typeof TurnSignal.Type

export type SignalKind = "approval" | "result" | "question"

export const turnSignal = (kind: SignalKind, toolCallId: ToolCallId) =>
  DurableDeferred.make(`${kind}/${toolCallId}`, { success: TurnSignal })

/** The token of a wait of the turn, to store on the row that will resolve it. */
export const signalToken = (payload: TurnPayload, kind: SignalKind, toolCallId: ToolCallId) =>
  DurableDeferred.tokenFromPayload(turnSignal(kind, toolCallId), { workflow: TurnWorkflow, payload })

/** Resolves a wait of a turn from outside the workflow (a second resolution of the same wait is ignored). */
export const resolveSignal = (kind: SignalKind, toolCallId: ToolCallId, token: string, value: TurnSignal) =>
  DurableDeferred.succeed(turnSignal(kind, toolCallId), {
    token: DurableDeferred.Token.make(token),
    value
  })

/** The cluster's entity type of the turn workflow's executions (one entity per execution). */
export const turnEntityType = EntityType.make(`Workflow/${TurnWorkflow._tag}`)

/**
 * Whether a message to a turn's workflow is in the cluster's storage: sent once, it is delivered
 * (on whichever process holds the workflow's shard), so recovery need not send it again. The keys
 * are the ones ClusterWorkflowEngine gives its messages: entity `Workflow/<name>` per execution, the
 * `run` message with primary key "", a `deferred` message keyed by the deferred's name
 * (test/runtime/Recovery.test.ts checks them).
 */
const executionAddress = (executionId: string) =>
  Effect.map(Sharding.Sharding, (sharding) => {
    const entityId = EntityId.make(executionId)
    return EntityAddress.make({
      entityType: turnEntityType,
      entityId,
      shardId: sharding.getShardId(entityId, "default")
    })
  })

const messageSaved = (executionId: string, tag: "run" | "deferred", id: string) =>
  Effect.gen(function*() {
    const storage = yield* MessageStorage.MessageStorage
    const address = yield* executionAddress(executionId)
    return Option.isSome(yield* storage.requestIdForPrimaryKey({ address, tag, id }))
  })

/** Whether the turn's workflow was started (its `run` message saved). */
export const turnStarted = (payload: TurnPayload) =>
  Effect.flatMap(TurnWorkflow.executionId(payload), (executionId) => messageSaved(executionId, "run", ""))

/** Whether the resolution of the wait with this token was sent (its `deferred` message saved). */
export const signalSent = (token: string) => {
  const parsed = DurableDeferred.TokenParsed.fromString(token)
  return messageSaved(parsed.executionId, "deferred", parsed.deferredName)
}

/**
 * Marks the unprocessed messages of the turn's workflow unread, so that the process holding its
 * shard reads them again at its next storage read. The cluster marks a message read when it
 * fetches it, and fetches a read message again only ten minutes later; a message fetched while it
 * could not be delivered (its shard being handed over, its entity closing) would wait that long
 * (effect#8312). One already being processed is skipped, as at any read.
 */
export const markTurnMessagesUnread = (payload: TurnPayload) =>
  Effect.gen(function*() {
    const storage = yield* MessageStorage.MessageStorage
    const executionId = yield* TurnWorkflow.executionId(payload)
    yield* storage.resetAddress(yield* executionAddress(executionId))
  })
