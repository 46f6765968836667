/**
 * Tool calls: reading them, and the result of a ready custom tool call. A result is checked
 * against the size limits of the API, then the call is found on the agent in the project and
 * refused with 409 when it is built-in or not ready, before the result's media are stored; the
 * call is completed with its `tool_result` event in one statement (or, when something was in the
 * way, in a transaction that locks and checks it again); then the turn's wait on it is resolved.
 */
import { Context, Effect, Layer, Option } from "effect"
import { NotFound, StateTransitionConflict } from "../../domain/shared/Errors.ts"
import type { AgentId, OrgId, ProjectId, ToolCallId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import type { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import type { EventOf } from "../../domain/runtime/Events.ts"
import { type SubmitToolResult, ToolResult, ToolResultAccepted } from "../../domain/runtime/ToolCalls.ts"
import { someOrFail } from "../shared/Failures.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { AgentAccess, agentNotFound } from "./AgentAccess.ts"
import { AgentsRepository } from "./AgentsRepository.ts"
import { Artifacts, prepareBlocks } from "./Artifacts.ts"
import { Timeline } from "./Timeline.ts"
import { type StoredToolCall, toToolCall, ToolCallsRepository } from "./ToolCallsRepository.ts"
import { ToolDispatch } from "./ToolDispatch.ts"
import { TurnLifecycle } from "./TurnLifecycle.ts"
import { PersonalResourceUse } from "./PersonalResourceUse.ts"
import { TurnSignals } from "./TurnSignals.ts"

/** Only custom tool calls take results. */
const builtIn = (call: StoredToolCall) =>
  new StateTransitionConflict({
    error: `Tool call ${call.id} is a built-in tool (${call.name}); only custom tool calls accept results`
  })

/** Why a call takes no result: it is built-in, or not `ready`. */
const refusal = (call: StoredToolCall): StateTransitionConflict | undefined => {
  if (call.type === "built_in") return builtIn(call)
  switch (call.state) {
    case "ready":
      return undefined
    case "completed":
      return new StateTransitionConflict({ error: `Tool call ${call.id} already has a result; only the first result is accepted` })
    case "awaiting_authorization":
      return new StateTransitionConflict({
        error: `Tool call ${call.id} awaits approval; resolve its approval interaction before submitting a result`
      })
    case "cancelled":
      return new StateTransitionConflict({ error: `Tool call ${call.id} was cancelled with its turn; it takes no result` })
    default:
      return new StateTransitionConflict({ error: `Tool call ${call.id} is ${call.state} and takes no result` })
  }
}

const make = Effect.gen(function*() {
  const toolCalls = yield* ToolCallsRepository
  const agents = yield* AgentsRepository
  const agentAccess = yield* AgentAccess
  const artifacts = yield* Artifacts
  const timeline = yield* Timeline
  const lifecycle = yield* TurnLifecycle
  const dispatcher = yield* ToolDispatch
  const signals = yield* TurnSignals
  const personalResources = yield* PersonalResourceUse

  const notFound = (agentId: AgentId, toolCallId: ToolCallId) => () =>
    new NotFound({ error: `Tool call ${toolCallId} not found for agent ${agentId}` })

  /** The agent's tool calls, oldest first. */
  const list = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: ListQuery) =>
    Effect.andThen(
      agentAccess.read(orgId, projectId, agentId),
      paged(
        listOf("tool calls", agentId),
        query,
        (keyset) => Effect.map(toolCalls.page(agentId, keyset), (calls) => calls.map(toToolCall)),
        (c) => c.id
      )
    )

  const get = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, toolCallId: ToolCallId) =>
    Effect.andThen(
      agentAccess.read(orgId, projectId, agentId),
      toolCalls.find(agentId, toolCallId).pipe(someOrFail(notFound(agentId, toolCallId)), Effect.map(toToolCall))
    )

  /** The failure of a call not found: the agent's when the agent is not in the project, else the call's. */
  const missing = (projectId: ProjectId, agentId: AgentId, toolCallId: ToolCallId) =>
    Effect.flatMap(agents.findInProject(projectId, agentId), (agent) =>
      Effect.fail(Option.isNone(agent) ? agentNotFound(projectId, agentId) : notFound(agentId, toolCallId)()))

  /** The call as its completion left it: the outcome, the result's event, and that event's `created_at`. */
  const completed = (call: StoredToolCall, outcome: SubmitToolResult["outcome"], event: EventOf<"tool_result">): StoredToolCall => ({
    ...call,
    state: "completed",
    outcome,
    result_event_id: event.id,
    completed_at: event.created_at
  })

  /**
   * Completes a ready custom call in one transaction (the agent's lock and the call's in one
   * statement, the result's event appended with the call's completion, the turn's status), which
   * finds out why the call takes no result when it does not.
   */
  const completeInTransaction = (
    projectId: ProjectId,
    agentId: AgentId,
    toolCallId: ToolCallId,
    outcome: SubmitToolResult["outcome"],
    blocks: ReadonlyArray<ContentBlock>
  ) =>
    timeline.transaction(Effect.gen(function*() {
      const found = yield* toolCalls.findAfterLock(agents.lockFirstInProject(projectId, agentId), toolCallId)
      if (Option.isNone(found)) return yield* missing(projectId, agentId, toolCallId)
      const locked = found.value
      const refused = refusal(locked)
      if (refused !== undefined) return yield* Effect.fail(refused)
      const event = yield* dispatcher.completeCall(agentId, locked.turn_id, locked.id, outcome, blocks)
      yield* lifecycle.refreshStatus(agentId, locked.turn_id)
      return { call: completed(locked, outcome, event), event }
    }))

  /**
   * The result of a custom tool call. The call is read first (with its agent's project) and
   * refused when it takes no result, before the result's media are stored. Then it is completed
   * with its result in one statement (TurnLifecycle.completeCallAlone), or, when something was in
   * the way (the call completed or cancelled meanwhile, an append to the agent), in a transaction
   * (`completeInTransaction`); then the turn's wait is resolved.
   */
  const submitResult = (
    orgId: OrgId,
    projectId: ProjectId,
    agentId: AgentId,
    toolCallId: ToolCallId,
    result: SubmitToolResult
  ) =>
    Effect.gen(function*() {
      yield* agentAccess.mayWrite(orgId, projectId)
      const prepared = yield* prepareBlocks(result.content_blocks, "/content_blocks")
      const found = yield* toolCalls.findInProject(projectId, agentId, toolCallId)
      if (Option.isNone(found)) return yield* missing(projectId, agentId, toolCallId)
      yield* personalResources.requireForAgentOf(found.value.agent_config_id)
      const refused = refusal(found.value)
      if (refused !== undefined) return yield* Effect.fail(refused)
      const blocks = yield* artifacts.store(agentId, prepared)
      const alone = yield* lifecycle.completeCallAlone(
        agentId,
        found.value.turn_id,
        toolCallId,
        result.outcome,
        blocks,
        (turn, eventId) => [
          toolCalls.lockOpenBefore(turn, toolCallId, "custom"),
          toolCalls.completeAfter("open_call", toolCallId, result.outcome, eventId)
        ]
      )
      const { call, event } = Option.isSome(alone)
        ? { call: completed(found.value, result.outcome, alone.value), event: alone.value }
        : yield* completeInTransaction(projectId, agentId, toolCallId, result.outcome, blocks)
      if (call.deferred_token !== null) {
        yield* signals.send([{ kind: "result", toolCallId, token: call.deferred_token, value: "completed" }])
      }
      return new ToolResultAccepted({
        tool_call: toToolCall(call),
        tool_result: new ToolResult({
          event_id: event.id,
          agent_id: agentId,
          tool_call_id: toolCallId,
          outcome: event.outcome,
          content_blocks: event.content_blocks,
          created_at: event.created_at
        })
      })
    })

  return { list, get, submitResult } as const
})

export class ToolCalls extends Context.Service<ToolCalls, Effect.Success<typeof make>>()("ToolCalls") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ToolCallsRepository.layer,
      AgentsRepository.layer,
      AgentAccess.layer,
      Artifacts.layer,
      Timeline.layer,
      TurnLifecycle.layer,
      ToolDispatch.layer,
      TurnSignals.layer,
      PersonalResourceUse.layer
    ])
  )
}
