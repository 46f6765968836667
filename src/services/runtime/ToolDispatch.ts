/**
 * Dispatching a tool call (docs/runtime.md, "Tools"), inside the caller's transaction:
 *
 * - a tool whose permission is `ask`, not yet approved: the call waits in `awaiting_authorization`
 *   and an approval interaction opens;
 * - a custom tool: the call is `ready` for the client's result;
 * - `ask_question`: the call is `running` and a question interaction opens; the answer is its result;
 * - a built-in tool that needs a machine: no machine is connected to this server yet, so the call
 *   completes at once with a failed result saying so;
 * - a tool the config does not offer: a failed result saying so.
 *
 * Each step writes its events to the timeline in the same transaction as the state change.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BUILTIN_TOOLS } from "../../domain/configuration/agent-config/BuiltinTools.ts"
import type { CompiledTool } from "../../domain/configuration/agent-config/Compiled.ts"
import { type AgentId, InteractionId, type ProjectId, type ToolCallId } from "../../domain/shared/Ids.ts"
import type { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import type { AgentEvent } from "../../domain/runtime/Events.ts"
import { Timeline } from "./Timeline.ts"
import { ASK_QUESTION, questionOf } from "./ToolDefinitions.ts"
import { signalToken, type TurnPayload } from "./TurnWorkflow.ts"

export interface DispatchedCall {
  readonly id: ToolCallId
  readonly name: string
  readonly input: Readonly<Record<string, unknown>>
}

/** What the turn waits for once a call is dispatched. */
export type NextWait = "approval" | "result" | "question" | "none"

export const NO_MACHINE_RESULT = (name: string) =>
  `The built-in tool ${name} runs on a machine, and no machine is connected to this agent, so it did not run.`

export class ToolDispatch extends Effect.Service<ToolDispatch>()("ToolDispatch", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const timeline = yield* Timeline

    /** Completes a call with its result, recorded on the timeline; the result's event. */
    const completeCall = (
      agentId: AgentId,
      turnId: TurnPayload["turn_id"],
      callId: ToolCallId,
      outcome: "succeeded" | "failed",
      contentBlocks: ReadonlyArray<ContentBlock>
    ) =>
      Effect.gen(function*() {
        const [event] = yield* timeline.append(agentId, [{
          event_kind: "tool_result",
          turn_id: turnId,
          is_opening_event: false,
          tool_call_id: callId,
          outcome,
          content_blocks: contentBlocks
        }])
        yield* sql`
          UPDATE tool_calls SET state = 'completed', outcome = ${outcome}, result_event_id = ${event.id}, completed_at = now()
          WHERE id = ${callId}`
        return event as Extract<AgentEvent, { event_kind: "tool_result" }>
      }).pipe(Effect.orDie)

    const failCall = (agentId: AgentId, turnId: TurnPayload["turn_id"], callId: ToolCallId, message: string) =>
      completeCall(agentId, turnId, callId, "failed", [{ type: "text", text: message }])

    const openInteraction = (
      payload: TurnPayload,
      projectId: ProjectId,
      call: DispatchedCall,
      kind: "approval" | "question"
    ) =>
      Effect.gen(function*() {
        const id = InteractionId.make()
        const token = yield* signalToken(payload, kind, call.id)
        const question = kind === "question" ? questionOf(call.input) : null
        yield* sql`INSERT INTO interactions ${
          sql.insert({
            id,
            agent_id: payload.agent_id,
            project_id: projectId,
            turn_id: payload.turn_id,
            tool_call_id: call.id,
            kind,
            status: "pending",
            question,
            deferred_token: token
          })
        }`
        const text = question ?? `The agent asks to call the tool ${call.name} with the input ${JSON.stringify(call.input)}.`
        yield* timeline.append(payload.agent_id, [{
          event_kind: "interaction",
          turn_id: payload.turn_id,
          is_opening_event: false,
          interaction_id: id,
          interaction_kind: kind,
          interaction_status: "opened",
          tool_call_id: call.id,
          content_blocks: [{ type: "text", text }]
        }])
      }).pipe(Effect.orDie)

    /**
     * Moves a call (its row already inserted) to its next state; `approved` once its approval was
     * given (or when its tool does not ask). Returns what the turn waits for next.
     */
    const dispatch = (
      payload: TurnPayload,
      projectId: ProjectId,
      call: DispatchedCall,
      tool: CompiledTool | undefined,
      approved: boolean
    ): Effect.Effect<NextWait> =>
      Effect.gen(function*() {
        if (tool === undefined || !tool.enabled) {
          yield* failCall(payload.agent_id, payload.turn_id, call.id, `There is no tool named ${call.name} available to this agent.`)
          return "none"
        }
        if (tool.permission === "ask" && !approved) {
          yield* sql`UPDATE tool_calls SET state = 'awaiting_authorization' WHERE id = ${call.id}`
          yield* openInteraction(payload, projectId, call, "approval")
          return "approval"
        }
        if (tool.type === "custom") {
          yield* sql`UPDATE tool_calls SET state = 'ready' WHERE id = ${call.id}`
          return "result"
        }
        if (call.name === ASK_QUESTION) {
          yield* sql`UPDATE tool_calls SET state = 'running' WHERE id = ${call.id}`
          yield* openInteraction(payload, projectId, call, "question")
          return "question"
        }
        yield* failCall(
          payload.agent_id,
          payload.turn_id,
          call.id,
          BUILTIN_TOOLS[call.name]?.needsMachine === true
            ? NO_MACHINE_RESULT(call.name)
            : `The built-in tool ${call.name} cannot run on this server.`
        )
        return "none"
      }).pipe(Effect.orDie)

    return { dispatch, completeCall, failCall } as const
  })
}) {}
