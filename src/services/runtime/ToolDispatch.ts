/**
 * Dispatching a tool call (docs/runtime.md, "Tools"), inside the caller's transaction:
 *
 * - a tool whose permission is `ask`, not yet approved: the call waits in `awaiting_authorization`
 *   and an approval interaction opens;
 * - a custom tool: the call is `ready` for the client's result;
 * - `ask_question`: the call is `running` and a question interaction opens; the answer is its result;
 * - a built-in tool that needs a machine, of an agent whose config names one: the call is `running`
 *   and its request is stored in the machine's mailbox (docs/machines.md); the daemon's result
 *   completes it (MachineResults) and resolves the turn's wait, like a custom tool's result; when
 *   the config names a machine pool, the request waits unassigned until the pool admits it to a
 *   machine of the agent's (PoolAdmission, docs/machine-pools.md);
 * - a built-in tool that needs a machine, of an agent whose config names none: the call completes
 *   at once with a failed result saying so;
 * - a tool the config does not offer: a failed result saying so.
 *
 * Each step writes its events to the timeline in the same transaction as the state change. A
 * custom call, and a machine call, that need no approval are dispatched by their rows alone (the
 * call's, and its machine request), which the statement recording the model's answer writes when
 * every call of the answer is one (`dispatchedWithItsRow`, StepRecorder).
 */
import { Context, Effect, Layer } from "effect"
import { BUILTIN_TOOLS } from "../../domain/configuration/agent-config/BuiltinTools.ts"
import type { CompiledTool } from "../../domain/configuration/agent-config/Compiled.ts"
import { type AgentId, InteractionId, type ProjectId, type ToolCallId, type TurnId } from "../../domain/shared/Ids.ts"
import type { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import type { EventOf, NewEvent } from "../../domain/runtime/Events.ts"
import type { ToolCallState } from "../../domain/runtime/ToolCalls.ts"
import type { MachineTarget } from "../../domain/machines/MachineTarget.ts"
import type { MachineToolName } from "../../domain/machines/MachineTools.ts"
import { MachineRequestsRepository, type NewRequest } from "../machines/MachineRequestsRepository.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { InteractionsRepository } from "./InteractionsRepository.ts"
import { Timeline } from "./Timeline.ts"
import { ToolCallsRepository } from "./ToolCallsRepository.ts"
import { ASK_QUESTION, questionOf } from "./ToolDefinitions.ts"
import { signalToken, type TurnPayload } from "./TurnWorkflow.ts"

export interface DispatchedCall {
  readonly id: ToolCallId
  readonly name: string
  readonly input: Readonly<Record<string, unknown>>
}

/** What the turn waits for once a call is dispatched. */
export type NextWait = "approval" | "result" | "question" | "none"

const NO_MACHINE_RESULT = (name: string) =>
  `The built-in tool ${name} runs on a machine, and no machine is connected to this agent, so it did not run.`

/**
 * The state a call is in once dispatched (`approved` once its approval was given, or when its
 * tool does not ask): `awaiting_authorization` for its approval, `ready` for a custom tool's
 * result, else `running` (a call that fails at once is completed by its dispatch).
 */
export const stateOnDispatch = (tool: CompiledTool | undefined, approved: boolean): ToolCallState => {
  if (tool === undefined || !tool.enabled) return "running"
  if (tool.permission === "ask" && !approved) return "awaiting_authorization"
  return tool.type === "custom" ? "ready" : "running"
}

/**
 * Whether a call of `tool` (`approved` or not) just waits for its result once dispatched: an
 * enabled custom tool that needs no approval (or has it). Its dispatch writes nothing then.
 */
const waitsForResultAlone = (tool: CompiledTool | undefined, approved: boolean): boolean =>
  tool !== undefined && tool.enabled && tool.type === "custom" && (approved || tool.permission !== "ask")

/** The `tool_result` event of a call's result. */
export const resultEvent = (
  turnId: TurnId,
  callId: ToolCallId,
  outcome: "succeeded" | "failed",
  contentBlocks: ReadonlyArray<ContentBlock>
): NewEvent => ({
  event_kind: "tool_result",
  turn_id: turnId,
  is_opening_event: false,
  tool_call_id: callId,
  outcome,
  content_blocks: contentBlocks
})

/** The id of a tool call's request to its machine (never reused: one request per call). */
const machineRequestId = (callId: ToolCallId) => `${callId}.1`

/** Whether a call of the built-in tool `name` runs on the machine of its agent's config (`machine`, null: none). */
export const runsOnMachine = (name: string, machine: MachineTarget | null): machine is MachineTarget =>
  machine !== null && BUILTIN_TOOLS[name]?.needsMachine === true

/**
 * Whether a call of `tool` (`name`) is dispatched by storing its row alone, with its request to
 * the agent's machine when it runs on one (`machine`): an enabled tool that needs no approval, and
 * is custom (it waits for the client's result) or runs on the machine (it waits for the daemon's).
 */
export const dispatchedWithItsRow = (name: string, tool: CompiledTool | undefined, machine: MachineTarget | null): boolean =>
  waitsForResultAlone(tool, false) ||
  (tool !== undefined && tool.enabled && tool.type === "built_in" && tool.permission !== "ask" && runsOnMachine(name, machine))

/** The request of a built-in call of the agent to the machine (or pool) its config names (docs/machines.md). */
export const machineRequest = (agentId: AgentId, call: DispatchedCall, machine: MachineTarget): NewRequest => ({
  request_id: machineRequestId(call.id),
  machine_id: machine.place._tag === "Machine" ? machine.place.machineId : null,
  machine_pool_id: machine.place._tag === "Pool" ? machine.place.poolId : null,
  operation: {
    operation: "tool",
    tool_call_id: call.id,
    tool: call.name as MachineToolName,
    input: call.input,
    cwd: machine.cwd,
    env: machine.env,
    unset_env: machine.unsetEnv
  },
  secret_env: machine.secretEnv,
  agent_id: agentId,
  tool_call_id: call.id
})

const make = Effect.gen(function*() {
  const toolCalls = yield* ToolCallsRepository
  const interactions = yield* InteractionsRepository
  const timeline = yield* Timeline
  const ids = yield* IdGenerator
  const machineRequests = yield* MachineRequestsRepository

  /**
   * Completes a call with its result, recorded on the timeline: the result's event, whose append
   * completes the call in the same statement.
   */
  const completeCall = (
    agentId: AgentId,
    turnId: TurnId,
    callId: ToolCallId,
    outcome: "succeeded" | "failed",
    contentBlocks: ReadonlyArray<ContentBlock>
  ) =>
    Effect.map(
      timeline.append(
        agentId,
        [resultEvent(turnId, callId, outcome, contentBlocks)],
        undefined,
        ([eventId]) => [toolCalls.completeBefore(callId, outcome, eventId)]
      ),
      ([event]) => event as EventOf<"tool_result">
    )

  const failCall = (agentId: AgentId, turnId: TurnId, callId: ToolCallId, message: string) =>
    completeCall(agentId, turnId, callId, "failed", [{ type: "text", text: message }])

  const openInteraction = (
    payload: TurnPayload,
    projectId: ProjectId,
    call: DispatchedCall,
    kind: "approval" | "question"
  ) =>
    Effect.gen(function*() {
      const id = yield* ids.make(InteractionId)
      const token = yield* signalToken(payload, kind, call.id)
      const question = kind === "question" ? questionOf(call.input) : null
      yield* interactions.insert({
        id,
        agent_id: payload.agent_id,
        project_id: projectId,
        turn_id: payload.turn_id,
        tool_call_id: call.id,
        kind,
        question,
        deferred_token: token
      })
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
    })

  /**
   * Moves on a call whose row is in its state on dispatch already (`stateOnDispatch`): opens its
   * interaction, stores its request to `machine` (the one the agent's config names, if any), or
   * completes it when it cannot run. Returns what the turn waits for next.
   */
  const moveOn = (
    payload: TurnPayload,
    projectId: ProjectId,
    call: DispatchedCall,
    tool: CompiledTool | undefined,
    machine: MachineTarget | null,
    approved: boolean
  ): Effect.Effect<NextWait> =>
    Effect.gen(function*() {
      if (waitsForResultAlone(tool, approved)) return "result"
      if (tool === undefined || !tool.enabled) {
        yield* failCall(payload.agent_id, payload.turn_id, call.id, `There is no tool named ${call.name} available to this agent.`)
        return "none"
      }
      if (tool.permission === "ask" && !approved) {
        yield* openInteraction(payload, projectId, call, "approval")
        return "approval"
      }
      // A built-in tool, from here.
      if (call.name === ASK_QUESTION) {
        yield* openInteraction(payload, projectId, call, "question")
        return "question"
      }
      if (runsOnMachine(call.name, machine)) {
        yield* machineRequests.insert(machineRequest(payload.agent_id, call, machine))
        return "result"
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
    })

  /**
   * Dispatches a new call, its row inserted in its state on dispatch (`stateOnDispatch`, not
   * approved); `machine`, where the agent's config runs built-in tools. Returns what the turn
   * waits for next.
   */
  const dispatch = (
    payload: TurnPayload,
    projectId: ProjectId,
    call: DispatchedCall,
    tool: CompiledTool | undefined,
    machine: MachineTarget | null
  ) => moveOn(payload, projectId, call, tool, machine, false)

  /** Dispatches a call whose approval was given: it moves to its state on dispatch, then on as `dispatch` moves a new call. */
  const dispatchApproved = (
    payload: TurnPayload,
    projectId: ProjectId,
    call: DispatchedCall,
    tool: CompiledTool | undefined,
    machine: MachineTarget | null
  ) => Effect.andThen(toolCalls.setState(call.id, stateOnDispatch(tool, true)), moveOn(payload, projectId, call, tool, machine, true))

  return { dispatch, dispatchApproved, completeCall, failCall } as const
})

export class ToolDispatch extends Context.Service<ToolDispatch, Effect.Success<typeof make>>()("ToolDispatch") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ToolCallsRepository.layer,
      InteractionsRepository.layer,
      Timeline.layer,
      IdGenerator.layer,
      MachineRequestsRepository.layer
    ])
  )
}
