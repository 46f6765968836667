/**
 * The agents of workspace sessions (docs/workspaces.md): each an ordinary agent of the workspace's
 * project, from an agent config made for it with the model of the caller's settings (over the
 * session's), an instruction naming its worktree, and machine tools on the session's machine (or,
 * for a REMOTE worktree, on a machine of the workspace's pool). The initial prompt is its first input.
 */
import { Context, Effect, Layer } from "effect"
import { InvalidRequest } from "../../domain/shared/Errors.ts"
import type { AgentConfigId, AgentId, UserId } from "../../domain/shared/Ids.ts"
import { cloneDirectory, worktreeDirectory } from "../../domain/machines/WorkspaceOperations.ts"
import { type CodeSettings, effectiveCode, toolsOf } from "../../domain/workspaces/SessionCode.ts"
import type { SessionSettings } from "../../domain/workspaces/Workspaces.ts"
import { AgentConfigs } from "../configuration/AgentConfigs.ts"
import { AgentInputs } from "../runtime/AgentInputs.ts"
import { Agents } from "../runtime/Agents.ts"
import { UserSettings } from "./UserSettings.ts"
import type { StoredWorkspace } from "./WorkspacesRepository.ts"

/** A session's prompt as an input. */
const promptInput = (text: string) => ({ content_blocks: [{ type: "text" as const, text }] })

const make = Effect.gen(function*() {
  const settings = yield* UserSettings
  const configs = yield* AgentConfigs
  const agents = yield* Agents
  const inputs = yield* AgentInputs

  /** Sends `text`, when given, as an input of the agent. */
  const prompt = (workspace: StoredWorkspace, agentId: AgentId, text: string | null | undefined) =>
    text === null || text === undefined
      ? Effect.void
      : inputs.send(workspace.org_id, workspace.project_id, agentId, promptInput(text)).pipe(
        Effect.asVoid,
        // No idempotency key is sent.
        Effect.catchTag("IdempotencyKeyConflict", Effect.die)
      )

  /** The model of the session: the default provider (else the only configured one) and its model. */
  const modelOf = (code: CodeSettings) =>
    Effect.gen(function*() {
      const providers = code.providers ?? {}
      const keys = Object.keys(providers)
      const provider = code.default_provider ?? (keys.length === 1 ? keys[0] : undefined)
      const entry = provider === undefined ? undefined : providers[provider]
      if (provider === undefined || entry?.model === undefined) {
        return yield* Effect.fail(
          new InvalidRequest({
            error: "No model for the session's agent: set code.default_provider and code.providers.<provider>.model " +
              "in your settings (PATCH /api/v1/user/settings) or in session_settings",
            issues: [{ path: "/session_settings/code", message: "names no provider with a model" }]
          })
        )
      }
      return { provider, model: entry.model, thinking: entry.thinking }
    })

  /**
   * A new agent config and agent of the project for the session, working in `path` on the
   * machine. The config is found again by its content when it exists; the agent is made in one
   * transaction with what `start` gives: its session's row (`alongside`) and its first input
   * (`prompt`), all or nothing.
   */
  const newAgent = (
    workspace: StoredWorkspace,
    source: Readonly<Record<string, unknown>>,
    path: string,
    branch: string | null,
    code: CodeSettings,
    metadata: Readonly<Record<string, unknown>>,
    start?: {
      readonly prompt: string | null | undefined
      readonly alongside: (agent: { readonly agentId: AgentId; readonly configId: AgentConfigId }) => Effect.Effect<unknown>
    }
  ) =>
    Effect.gen(function*() {
      const { model, provider, thinking } = yield* modelOf(code)
      const definition = {
        instruction: `You are the coding agent of the workspace "${workspace.name}". You work in the directory ${path}` +
          (branch === null ? "" : `, a git worktree on the branch ${branch}`) +
          ". Use the machine tools to read, search, change files and run commands there.",
        model: {
          provider_config: provider,
          name: model,
          ...(thinking === undefined || thinking === "none" ? {} : { reasoning: { effort: thinking } })
        },
        tools: toolsOf(code.mode),
        machine_sources: [source]
      }
      const created = yield* configs.create(workspace.org_id, workspace.project_id, {
        source_format: "json",
        source: definition
      }).pipe(
        Effect.catchTag("ValidationFailed", (failure) =>
          Effect.fail(
            new InvalidRequest({
              error: `The session's agent config is not valid for project ${workspace.project_id} (check the model in ` +
                `your settings or session_settings): ${failure.error}`,
              issues: failure.issues ?? []
            })
          ))
      )
      const configId = created.config.id
      const prompt = start?.prompt
      const agent = yield* agents.launchAlong(
        workspace.org_id,
        workspace.project_id,
        {
          agent_config_id: configId,
          metadata: { ...metadata },
          ...(prompt === null || prompt === undefined ? {} : { input: promptInput(prompt) })
        },
        start === undefined ? undefined : (agentId) => start.alongside({ agentId, configId })
      )
      return { agentId: agent.id, configId }
    })

  /**
   * The agent of a REMOTE worktree `name` (null: the main one): its config names the workspace's
   * pool (one machine, started at launch), with the caller's settings' model. The machine is not
   * started yet, so its tools start where the daemon places the worktree relative to the machine's
   * first directory, wherever that is.
   */
  const sandboxAgent = (workspace: StoredWorkspace, userId: UserId, name: string | null) =>
    Effect.gen(function*() {
      const code = effectiveCode(yield* settings.get(userId), null)
      const cwd = name !== null
        ? worktreeDirectory(workspace.id, name)
        : workspace.repository_url !== null
        ? cloneDirectory(workspace.id)
        : undefined
      return yield* newAgent(
        workspace,
        { machine_pool_id: workspace.machine_pool_id, initial_num_machines: 1, max_machines: 1, ...(cwd === undefined ? {} : { cwd }) },
        cwd ?? "the machine's first directory",
        name,
        code,
        { workspace_id: workspace.id }
      )
    })

  /** The code settings of a session of the user (over `sessionSettings`), once they name a model. */
  const codeFor = (userId: UserId, sessionSettings: SessionSettings | null | undefined) =>
    Effect.gen(function*() {
      const code = effectiveCode(yield* settings.get(userId), sessionSettings)
      yield* modelOf(code)
      return code
    })

  return { prompt, codeFor, newAgent, sandboxAgent } as const
})

export class SessionAgents extends Context.Service<SessionAgents, Effect.Success<typeof make>>()("SessionAgents") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      UserSettings.layer,
      AgentConfigs.layer,
      Agents.layer,
      AgentInputs.layer
    ])
  )
}
