/**
 * The work of a turn's activities (docs/runtime.md, "The loop"):
 *
 * - `modelStep(turn, n)`: the n-th model call of a turn. It builds the request from the timeline
 *   (compacting earlier turns first when the input does not fit), calls the model through the
 *   adapter of the model's api format, and records the output (text, reasoning summaries, tool
 *   calls) with the dispatch of each call, the turn's usage and a `turn_steps` row in ONE
 *   transaction. Run again after a crash, it returns the recorded step instead of calling the
 *   model again; a call that never completed is made again.
 * - `finish(turn, status, error)`: ends the turn and starts the agent's next queued input.
 */
import { PgClient } from "@effect/sql-pg"
import { Data, Effect, Either, Option, Redacted, Schema } from "effect"
import type { CompiledAgentConfig, CompiledTool } from "../../domain/configuration/agent-config/Compiled.ts"
import { isBuiltinTool } from "../../domain/configuration/agent-config/BuiltinTools.ts"
import type { AgentConfigId, AgentId, ProjectId, SkillId } from "../../domain/shared/Ids.ts"
import { ToolCallId, type TurnId } from "../../domain/shared/Ids.ts"
import type { AgentEvent, NewEvent } from "../../domain/runtime/Events.ts"
import { Models } from "../configuration/Models.ts"
import { Secrets } from "../configuration/Secrets.ts"
import { budgetOf, type Budget, describeOverflow, estimateInputTokens } from "./ContextBudget.ts"
import { conversationOf, REPLAY_METADATA_KEY, type TimelineView, viewOf } from "./Conversation.ts"
import { ModelClient } from "./ModelClient.ts"
import type { AssistantItem, ConversationItem, ModelRequest, ModelResponse, Usage } from "./ModelMessages.ts"
import { Timeline } from "./Timeline.ts"
import { ToolDispatch } from "./ToolDispatch.ts"
import { toolDefinitions } from "./ToolDefinitions.ts"
import { TurnCancellation } from "./TurnCancellation.ts"
import { TurnLauncher } from "./TurnLauncher.ts"
import { type FinalTurnStatus, TurnLifecycle } from "./TurnLifecycle.ts"
import { signalToken, type TurnPayload } from "./TurnWorkflow.ts"

/** A tool call of a step and what the turn waits for on it: first its approval (if any), then its result or answer. */
export const PlannedCall = Schema.Struct({
  tool_call_id: ToolCallId,
  approval: Schema.Boolean,
  then: Schema.Literal("result", "question", "none")
})
export type PlannedCall = typeof PlannedCall.Type

export const StepOutcome = Schema.Union(
  Schema.TaggedStruct("ToolCalls", { calls: Schema.Array(PlannedCall) }),
  Schema.TaggedStruct("Finished", {}),
  Schema.TaggedStruct("Failed", { error: Schema.String }),
  Schema.TaggedStruct("Stopped", {})
)
export type StepOutcome = typeof StepOutcome.Type

const stopped: StepOutcome = { _tag: "Stopped" }
const failed = (error: string): StepOutcome => ({ _tag: "Failed", error })

export const COMPACTION_INSTRUCTION =
  "You compact conversations so that an assistant can continue them with less context. Summarize the " +
  "conversation you are given: the user's goals and requests, decisions made, facts learned, tool calls " +
  "and results that still matter, and anything left open. Be concise and complete; answer with the summary only."

const COMPACTION_REQUEST = "Summarize the conversation above."

/** The settings of a turn's model requests, from the agent's compiled config and its model's current revision. */
interface TurnSetup {
  readonly projectId: ProjectId
  readonly tools: Readonly<Record<string, CompiledTool>>
  readonly base: Omit<ModelRequest, "conversation">
  readonly budget: Budget
}

const decodeOutcome = Schema.decodeUnknownSync(StepOutcome)

class StepAlreadyRecorded extends Data.TaggedError("StepAlreadyRecorded") {}

const skillsSection = (skills: ReadonlyArray<{ readonly name: string; readonly text: string }>) =>
  skills.length === 0
    ? ""
    : "\n\n# Skills\n" + skills.map((skill) => `\n## ${skill.name}\n\n${skill.text}`).join("\n")

/** The model's output as timeline events: consecutive text and reasoning in one `model_output`, each tool call its own event. */
const outputEvents = (
  turnId: TurnId,
  output: ReadonlyArray<AssistantItem>,
  calls: ReadonlyArray<{ readonly id: ToolCallId; readonly type: "built_in" | "custom" }>
): Array<NewEvent> => {
  const events: Array<NewEvent> = []
  let blocks: Array<Extract<NewEvent, { event_kind: "model_output" }>["content_blocks"][number]> = []
  const flush = () => {
    if (blocks.length > 0) {
      events.push({ event_kind: "model_output", turn_id: turnId, is_opening_event: false, content_blocks: blocks })
    }
    blocks = []
  }
  let callIndex = 0
  for (const item of output) {
    switch (item.type) {
      case "assistant_text":
        if (item.text !== "") blocks.push({ type: "text", text: item.text })
        break
      case "assistant_reasoning":
        blocks.push(
          item.replay === undefined
            ? { type: "reasoning_summary", text: item.summary }
            : { type: "reasoning_summary", text: item.summary, metadata: { [REPLAY_METADATA_KEY]: item.replay } }
        )
        break
      case "tool_call": {
        flush()
        const call = calls[callIndex++]
        events.push({
          event_kind: "tool_call",
          turn_id: turnId,
          is_opening_event: false,
          tool_call_id: call.id,
          tool_name: item.name,
          tool_type: call.type,
          tool_input: item.input
        })
        break
      }
    }
  }
  flush()
  return events
}

export class TurnSteps extends Effect.Service<TurnSteps>()("TurnSteps", {
  effect: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const timeline = yield* Timeline
    const models = yield* Models
    const secrets = yield* Secrets
    const client = yield* ModelClient
    const lifecycle = yield* TurnLifecycle
    const dispatcher = yield* ToolDispatch
    const cancellation = yield* TurnCancellation
    const launcher = yield* TurnLauncher

    const launchNext = (agentId: AgentId, next: Option.Option<TurnId>) =>
      Option.match(next, { onNone: () => Effect.void, onSome: (turnId) => launcher.launch(agentId, turnId) })

    const turnState = (turnId: TurnId) =>
      sql<{ active: boolean; project_id: ProjectId; agent_config_id: AgentConfigId }>`
        SELECT t.status IN ('running', 'waiting') AS active, a.project_id, a.agent_config_id
        FROM turns t JOIN agents a ON a.id = t.agent_id WHERE t.id = ${turnId}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    /** Inside a transaction that locked the agent: whether the turn still runs (locking its row). */
    const stillActive = (turnId: TurnId) =>
      sql<{ active: boolean }>`
        SELECT status IN ('running', 'waiting') AS active FROM turns WHERE id = ${turnId} FOR UPDATE`.pipe(
        Effect.map((rows) => rows[0]?.active === true),
        Effect.orDie
      )

    const setupOf = (agentId: AgentId, projectId: ProjectId, configId: AgentConfigId) =>
      Effect.gen(function*() {
        const [config] = yield* sql<{ compiled_definition: CompiledAgentConfig }>`
          SELECT compiled_definition FROM agent_configs WHERE id = ${configId}`.pipe(Effect.orDie)
        if (config === undefined) return yield* Effect.fail(`The agent config ${configId} no longer exists.`)
        const compiled = config.compiled_definition
        const model = yield* models.current(compiled.model.configured_model_id).pipe(
          Effect.mapError(() =>
            `The configured model ${compiled.model.configured_model_id} of this agent's config no longer exists.`
          )
        )
        const apiKey = model.providerConfig.authSecretId === null
          ? Redacted.make("")
          : yield* secrets.reveal(model.providerConfig.authSecretId).pipe(
            Effect.mapError(() =>
              `The API key secret of the model provider config ${model.providerConfig.name} no longer exists.`
            )
          )
        const skills = yield* Effect.forEach(compiled.skills ?? [], (skill) =>
          sql<{ content: { "SKILL.md": string } }>`
            SELECT content FROM skill_versions WHERE skill_id = ${skill.skill_id as SkillId} AND version = ${skill.version}`
            .pipe(
              Effect.orDie,
              Effect.map((rows) => rows.length === 0 ? [] : [{ name: skill.name, text: rows[0].content["SKILL.md"] }])
            ))
        const tools = compiled.tools ?? {}
        const maxOutputTokens = compiled.model.default_max_output_tokens ?? model.revision.defaultMaxOutputTokens ?? undefined
        const reasoningEffort = model.revision.supportsReasoning
          ? compiled.model.reasoning.effort ?? model.revision.defaultReasoningEffort
          : undefined
        const setup: TurnSetup = {
          projectId,
          tools,
          base: {
            apiFormat: model.providerConfig.apiFormat,
            baseUrl: model.providerConfig.baseUrl,
            apiKey,
            model: model.revision.providerModelSlug,
            instruction: compiled.instruction + skillsSection(skills.flat()),
            tools: model.revision.supportsTools ? toolDefinitions(tools) : [],
            maxOutputTokens,
            reasoningEffort,
            cacheRetention: compiled.model.cache_retention,
            conversationKey: agentId
          },
          budget: budgetOf(compiled.model.context_window_tokens, maxOutputTokens)
        }
        return setup
      })

    const allEvents = (agentId: AgentId) =>
      Effect.gen(function*() {
        const events: Array<AgentEvent> = []
        let after = 0
        while (true) {
          const page = yield* timeline.list(agentId, { after_sequence: after, limit: 500 })
          events.push(...page.data)
          if (!page.has_more) return events
          after = page.next_after_sequence
        }
      })

    const conversationNow = (agentId: AgentId) =>
      Effect.gen(function*() {
        const events = yield* allEvents(agentId)
        const calls = yield* sql<{ id: string; provider_call_id: string }>`
          SELECT id, provider_call_id FROM tool_calls WHERE agent_id = ${agentId}`.pipe(Effect.orDie)
        const providerCallIds = new Map(calls.map((call) => [call.id, call.provider_call_id]))
        const view = viewOf(events)
        return { view, providerCallIds, conversation: conversationOf(view, providerCallIds) }
      })

    /** A model call that stops when the turn is cancelled: the response, the provider's failure, or none when cancelled. */
    const callModel = (turnId: TurnId, request: ModelRequest) =>
      Effect.raceFirst(
        Effect.map(Effect.either(client.respond(request)), Option.some),
        Effect.as(cancellation.cancelled(turnId), Option.none())
      ).pipe(Effect.interruptible)

    const addUsage = (turnId: TurnId, usage: Usage, modelCalls: number) =>
      sql`
        UPDATE turns SET model_calls = model_calls + ${modelCalls},
          input_tokens = input_tokens + ${usage.input_tokens}, output_tokens = output_tokens + ${usage.output_tokens},
          cache_read_tokens = cache_read_tokens + ${usage.cache_read_tokens},
          cache_write_tokens = cache_write_tokens + ${usage.cache_write_tokens}
        WHERE id = ${turnId}`.pipe(Effect.orDie)

    /** Summarizes the finished turns of the view into a `compaction` event; a failure reason otherwise. */
    const compact = (payload: TurnPayload, setup: TurnSetup, view: TimelineView, providerCallIds: ReadonlyMap<string, string>) =>
      Effect.gen(function*() {
        const finished = view.turns.filter((turn) => turn.turnId !== payload.turn_id && turn.endSequence !== undefined)
        if (finished.length === 0) return Option.some("nothing to compact")
        const conversation: Array<ConversationItem> = [
          ...conversationOf({ compaction: view.compaction, turns: finished }, providerCallIds),
          { type: "user_message", content: [{ type: "text", text: COMPACTION_REQUEST }] }
        ]
        const answer = yield* callModel(payload.turn_id, {
          ...setup.base,
          instruction: COMPACTION_INSTRUCTION,
          tools: [],
          conversation
        })
        if (Option.isNone(answer)) return Option.some("cancelled")
        if (Either.isLeft(answer.value)) {
          return Option.some(`Compacting earlier turns failed: the model provider answered: ${answer.value.left.message}`)
        }
        const response = answer.value.right
        const summary = response.output.flatMap((item) => item.type === "assistant_text" ? [item.text] : []).join("")
        const through = Math.max(...finished.map((turn) => turn.endSequence ?? 0))
        yield* timeline.transaction(Effect.gen(function*() {
          yield* lifecycle.lockAgent(payload.agent_id)
          if (!(yield* stillActive(payload.turn_id))) return
          yield* timeline.append(payload.agent_id, [{
            event_kind: "compaction",
            turn_id: payload.turn_id,
            is_opening_event: false,
            compacted_through_sequence: through,
            content_blocks: [{ type: "text", text: summary }]
          }])
          yield* addUsage(payload.turn_id, response.usage, 1)
        })).pipe(Effect.orDie)
        return Option.none<string>()
      })

    const recordedStep = (turnId: TurnId, step: number) =>
      sql<{ outcome: unknown }>`SELECT outcome FROM turn_steps WHERE turn_id = ${turnId} AND step = ${step}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => decodeOutcome(row.outcome))),
        Effect.orDie
      )

    /**
     * Records a model response and dispatches its tool calls, in one transaction with the step's
     * row. When the step is recorded already (the same step ran twice at once: a workflow moving to
     * another process while its model call was still running on the first), the transaction is
     * rolled back and the recorded outcome returned, so the output is recorded once.
     */
    const record = (payload: TurnPayload, setup: TurnSetup, step: number, response: ModelResponse) =>
      timeline.transaction(Effect.gen(function*() {
        yield* lifecycle.lockAgent(payload.agent_id)
        if (!(yield* stillActive(payload.turn_id))) return { outcome: stopped, next: Option.none<TurnId>() }
        const toolItems = response.output.flatMap((item) => item.type === "tool_call" ? [item] : [])
        const calls = toolItems.map((item) => {
          const tool = setup.tools[item.name]
          const type: "built_in" | "custom" = tool?.type ?? (isBuiltinTool(item.name) ? "built_in" : "custom")
          return { id: ToolCallId.make(), item, tool, type }
        })
        yield* timeline.append(payload.agent_id, outputEvents(payload.turn_id, response.output, calls))
        const planned: Array<PlannedCall> = []
        for (const call of calls) {
          const token = call.type === "custom" ? yield* signalToken(payload, "result", call.id) : null
          yield* sql`INSERT INTO tool_calls ${
            sql.insert({
              id: call.id,
              agent_id: payload.agent_id,
              turn_id: payload.turn_id,
              provider_call_id: call.item.call_id,
              name: call.item.name,
              input: JSON.stringify(call.item.input),
              type: call.type,
              state: "running",
              deferred_token: token
            })
          }`
          const wait = yield* dispatcher.dispatch(
            payload,
            setup.projectId,
            { id: call.id, name: call.item.name, input: call.item.input },
            call.tool,
            false
          )
          const afterApproval = call.type === "custom" ? "result" : call.item.name === "ask_question" ? "question" : "none"
          planned.push(
            wait === "approval"
              ? { tool_call_id: call.id, approval: true, then: afterApproval }
              : { tool_call_id: call.id, approval: false, then: wait }
          )
        }
        const outcome: StepOutcome = planned.length === 0 ? { _tag: "Finished" } : { _tag: "ToolCalls", calls: planned }
        yield* addUsage(payload.turn_id, response.usage, 1)
        const inserted = yield* sql`INSERT INTO turn_steps ${
          sql.insert({ turn_id: payload.turn_id, step, outcome: JSON.stringify(Schema.encodeSync(StepOutcome)(outcome)) })
        } ON CONFLICT DO NOTHING RETURNING step`
        if (inserted.length === 0) return yield* new StepAlreadyRecorded()
        if (outcome._tag === "Finished") {
          const next = yield* lifecycle.finishTurn(payload.agent_id, payload.turn_id, "completed", null)
          return { outcome, next }
        }
        yield* lifecycle.refreshStatus(payload.agent_id, payload.turn_id)
        return { outcome, next: Option.none<TurnId>() }
      })).pipe(
        Effect.catchTag("StepAlreadyRecorded", () =>
          Effect.map(recordedStep(payload.turn_id, step), (outcome) => ({
            outcome: Option.getOrElse(outcome, () => stopped),
            next: Option.none<TurnId>()
          }))),
        Effect.orDie,
        Effect.tap(({ next }) => launchNext(payload.agent_id, next)),
        Effect.map(({ outcome }) => outcome)
      )

    /** Ends the turn (when it still runs) and launches the agent's next queued input. */
    const finish = (payload: TurnPayload, status: FinalTurnStatus, error: string | null) =>
      Effect.gen(function*() {
        const next = yield* timeline.transaction(Effect.gen(function*() {
          yield* lifecycle.lockAgent(payload.agent_id)
          return yield* lifecycle.finishTurn(payload.agent_id, payload.turn_id, status, error)
        })).pipe(Effect.orDie)
        yield* launchNext(payload.agent_id, next)
      })

    /**
     * One model call of the turn. A step without tool calls ends the turn in the transaction that
     * records it; a step that fails ends it too; either way the next queued input is launched.
     */
    const modelStep = (payload: TurnPayload, step: number): Effect.Effect<StepOutcome> =>
      Effect.tap(attemptStep(payload, step), (outcome) =>
        outcome._tag === "Failed" ? finish(payload, "failed", outcome.error) : Effect.void)

    const attemptStep = (payload: TurnPayload, step: number): Effect.Effect<StepOutcome> =>
      Effect.gen(function*() {
        const turn = yield* turnState(payload.turn_id)
        if (Option.isNone(turn) || !turn.value.active) return stopped
        const recorded = yield* recordedStep(payload.turn_id, step)
        if (Option.isSome(recorded)) return recorded.value

        const setup = yield* Effect.either(setupOf(payload.agent_id, turn.value.project_id, turn.value.agent_config_id))
        if (Either.isLeft(setup)) return failed(setup.left)
        let current = yield* conversationNow(payload.agent_id)
        let estimate = estimateInputTokens({ ...setup.right.base, conversation: current.conversation })
        if (estimate > setup.right.budget.input) {
          const problem = yield* compact(payload, setup.right, current.view, current.providerCallIds)
          if (Option.isSome(problem)) {
            if (problem.value === "cancelled") return stopped
            return failed(problem.value === "nothing to compact" ? describeOverflow(estimate, setup.right.budget) : problem.value)
          }
          current = yield* conversationNow(payload.agent_id)
          estimate = estimateInputTokens({ ...setup.right.base, conversation: current.conversation })
          if (estimate > setup.right.budget.input) return failed(describeOverflow(estimate, setup.right.budget))
        }

        const answer = yield* callModel(payload.turn_id, { ...setup.right.base, conversation: current.conversation })
        if (Option.isNone(answer)) return stopped
        if (Either.isLeft(answer.value)) {
          const error = answer.value.left
          return failed(
            `The model provider failed${error.status === null ? "" : ` with HTTP ${error.status}`}: ${error.message}`
          )
        }
        return yield* record(payload, setup.right, step, answer.value.right)
      })

    return { modelStep, finish } as const
  })
}) {}
