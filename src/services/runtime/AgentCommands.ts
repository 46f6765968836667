/**
 * What the API asks of running agents (docs/agents-api.md): it checks access, that the resource
 * belongs to the project, the references and size limits of the request, stores inline media,
 * and hands the request to the engine (AgentRuntime), which owns every runtime state change.
 */
import { Effect } from "effect"
import { StateTransitionConflict } from "../../domain/shared/Errors.ts"
import type { AgentId, InputId, InteractionId, OrgId, ProjectId, ToolCallId } from "../../domain/shared/Ids.ts"
import { canonicalJson } from "../../domain/configuration/agent-config/Canonical.ts"
import type { JsonValue } from "../../domain/configuration/agent-config/Definition.ts"
import { sha256 } from "../shared/Hash.ts"
import type {
  InputAccepted,
  LaunchAgent,
  ResolveInteraction,
  SendInput,
  SubmitToolResult
} from "../../domain/runtime/Resources.ts"
import { LaunchedAgent } from "../../domain/runtime/Resources.ts"
import { Access } from "../tenancy/Access.ts"
import { Actors } from "./Actors.ts"
import { AgentRuntime } from "./AgentRuntime.ts"
import { Agents } from "./Agents.ts"
import { Artifacts, prepareBlocks } from "./Artifacts.ts"

/** The answer to an input, and whether it replays the first answer under its idempotency key (200) or is new (201). */
export interface SentInput {
  readonly accepted: InputAccepted
  readonly replayed: boolean
}

/** sha256 of the canonical JSON of an input as submitted: what idempotent replays must match. */
const requestHash = (input: SendInput) =>
  sha256(canonicalJson({ content_blocks: input.content_blocks, actor_id: input.actor_id ?? null } as unknown as JsonValue))

export class AgentCommands extends Effect.Service<AgentCommands>()("AgentCommands", {
  effect: Effect.gen(function*() {
    const agents = yield* Agents
    const actors = yield* Actors
    const artifacts = yield* Artifacts
    const runtime = yield* AgentRuntime
    const access = yield* Access

    /** Checks an input's actor and size limits; nothing is stored. */
    const checkInput = (projectId: ProjectId, input: SendInput, field: string) =>
      Effect.zipRight(
        input.actor_id === undefined ? Effect.void : actors.requireInProject(projectId, input.actor_id, `${field}/actor_id`),
        prepareBlocks(input.content_blocks, `${field}/content_blocks`)
      )

    /**
     * Records an input of a checked request. A key already used on this agent is passed to the
     * engine with the blocks it recorded first (no media stored again): the engine answers with
     * the first result when the request is the same, `idempotency_key_conflict` when not.
     */
    const submit = (
      agentId: AgentId,
      input: SendInput,
      prepared: Effect.Effect.Success<ReturnType<typeof prepareBlocks>>
    ) =>
      Effect.gen(function*() {
        const key = input.input_idempotency_key ?? null
        const recorded = key === null ? undefined : yield* agents.inputByIdempotencyKey(agentId, key)
        const content_blocks = recorded?.content_blocks ?? (yield* artifacts.store(agentId, prepared))
        const accepted = yield* runtime.submitInput(agentId, {
          content_blocks,
          actor_id: input.actor_id ?? null,
          input_idempotency_key: key,
          request_hash: requestHash(input)
        })
        const sent: SentInput = { accepted, replayed: recorded !== undefined }
        return sent
      })

    /** A new agent; with `input`, that input recorded as its first (checked before the agent is made). */
    const launch = (orgId: OrgId, projectId: ProjectId, request: LaunchAgent) =>
      Effect.gen(function*() {
        const prepared = request.input === undefined ? undefined : yield* checkInput(projectId, request.input, "/input")
        const agent = yield* agents.create(orgId, projectId, request)
        if (request.input === undefined || prepared === undefined) return new LaunchedAgent({ ...agent })
        // A new agent has an empty backlog and no idempotency keys yet.
        const { accepted } = yield* submit(agent.id, request.input, prepared).pipe(
          Effect.catchTags({ AgentBacklogFull: Effect.die, IdempotencyKeyConflict: Effect.die })
        )
        const current = yield* agents.current(projectId, agent.id)
        return new LaunchedAgent({ ...current, input: accepted })
      })

    const sendInput = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, input: SendInput) =>
      Effect.gen(function*() {
        yield* agents.writeAgent(orgId, projectId, agentId)
        const prepared = yield* checkInput(projectId, input, "")
        return yield* submit(agentId, input, prepared)
      })

    const withdrawInput = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, inputId: InputId) =>
      Effect.zipRight(agents.writeAgent(orgId, projectId, agentId), runtime.withdrawInput(agentId, inputId))

    const cancelCurrent = (orgId: OrgId, projectId: ProjectId, agentId: AgentId) =>
      Effect.zipRight(agents.writeAgent(orgId, projectId, agentId), runtime.cancelCurrent(agentId, null))

    /**
     * A custom tool call's result (spec 4.1): checked against the limits of spec 8, then refused
     * with 409 when the call is built-in or not ready, all before its media are stored.
     */
    const submitToolResult = (
      orgId: OrgId,
      projectId: ProjectId,
      agentId: AgentId,
      toolCallId: ToolCallId,
      result: SubmitToolResult
    ) =>
      Effect.gen(function*() {
        yield* agents.writeAgent(orgId, projectId, agentId)
        const call = yield* agents.toolCallOf(agentId, toolCallId)
        const prepared = yield* prepareBlocks(result.content_blocks, "/content_blocks")
        if (call.type === "built_in") {
          return yield* Effect.fail(
            new StateTransitionConflict({
              error: `Tool call ${toolCallId} is a built-in tool (${call.name}); only custom tool calls accept results`
            })
          )
        }
        if (call.state !== "ready") {
          return yield* Effect.fail(
            new StateTransitionConflict({
              error: `Tool call ${toolCallId} is ${call.state}; only a ready custom tool call accepts a result`
            })
          )
        }
        const content_blocks = yield* artifacts.store(agentId, prepared)
        return yield* runtime.submitToolResult(agentId, toolCallId, { outcome: result.outcome, content_blocks })
      })

    const resolveInteraction = (
      orgId: OrgId,
      projectId: ProjectId,
      interactionId: InteractionId,
      resolution: ResolveInteraction
    ) =>
      Effect.gen(function*() {
        yield* access.requireProjectAccess(orgId, projectId, "write")
        yield* agents.interactionOf(projectId, interactionId)
        return yield* runtime.resolveInteraction(projectId, interactionId, resolution)
      })

    return { launch, sendInput, withdrawInput, cancelCurrent, submitToolResult, resolveInteraction } as const
  })
}) {}
