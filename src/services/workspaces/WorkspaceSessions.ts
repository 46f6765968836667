/**
 * Sessions of a workspace (`POST /api/v1/workspaces/{workspace_id}/sessions`, docs/workspaces.md):
 * a worktree made (or found) on a machine through its daemon, and an ordinary agent of the
 * workspace's project whose config puts its machine tools on that machine with `cwd` = the
 * worktree. The first input of the agent is the initial prompt. A worktree waiting for a
 * checkpoint restore on this machine is restored first.
 */
import { Effect, Option, Schema } from "effect"
import { Conflict, Forbidden, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import {
  type AgentConfigId,
  type AgentId,
  type MachineId,
  UserMachinePathId,
  type UserId,
  type WorkspaceId,
  WorkspaceSessionId,
  WorktreeId
} from "../../domain/shared/Ids.ts"
import { type CodeSettings, effectiveCode, toolsOf } from "../../domain/workspaces/SessionCode.ts"
import type { LaunchedSession, LaunchSession } from "../../domain/workspaces/Workspaces.ts"
import { AgentConfigs } from "../configuration/AgentConfigs.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import type { StoredMachine } from "../machines/StoredMachine.ts"
import { AgentInputs } from "../runtime/AgentInputs.ts"
import { Agents } from "../runtime/Agents.ts"
import { someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { Access } from "../tenancy/Access.ts"
import { CheckpointsRepository } from "./CheckpointsRepository.ts"
import { UserSettings } from "./UserSettings.ts"
import { asSessionFailure, WorkspaceMachines } from "./WorkspaceMachines.ts"
import { type StoredSession, WorkspaceSessionsRepository } from "./WorkspaceSessionsRepository.ts"
import { Workspaces } from "./Workspaces.ts"
import type { StoredWorkspace } from "./WorkspacesRepository.ts"
import { WorktreesRepository } from "./WorktreesRepository.ts"

/** The project route of an agent's timeline. */
export const eventsPath = (workspace: StoredWorkspace, agentId: AgentId) =>
  `/api/v1/orgs/${workspace.org_id}/projects/${workspace.project_id}/agents/${agentId}/events`

export class WorkspaceSessions extends Effect.Service<WorkspaceSessions>()("WorkspaceSessions", {
  effect: Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const worktrees = yield* WorktreesRepository
    const sessions = yield* WorkspaceSessionsRepository
    const checkpoints = yield* CheckpointsRepository
    const machines = yield* MachinesRepository
    const onMachine = yield* WorkspaceMachines
    const settings = yield* UserSettings
    const configs = yield* AgentConfigs
    const agents = yield* Agents
    const inputs = yield* AgentInputs
    const access = yield* Access
    const ids = yield* IdGenerator

    const ok = (workspace: StoredWorkspace, session: StoredSession): LaunchedSession => ({
      status: "ok",
      payload: {
        session_id: session.id,
        agent_id: session.agent_id,
        worktree_id: session.worktree_id,
        machine_id: session.machine_id,
        events_path: eventsPath(workspace, session.agent_id)
      }
    })

    const prompt = (workspace: StoredWorkspace, agentId: AgentId, text: string | null | undefined) =>
      text === null || text === undefined
        ? Effect.void
        : inputs.send(workspace.org_id, workspace.project_id, agentId, { content_blocks: [{ type: "text", text }] }).pipe(
          Effect.asVoid,
          // No idempotency key is sent.
          Effect.catchTag("IdempotencyKeyConflict", Effect.die)
        )

    /** A machine the user may use in the workspace's project, as stored. */
    const machineFor = (workspace: StoredWorkspace, userId: UserId, machineId: MachineId | null, field: string) =>
      Effect.gen(function*() {
        if (machineId === null) {
          return yield* Effect.fail(
            new InvalidRequest({
              error: "machine_id: the workspace has no default machine; name the machine of the session",
              issues: [{ path: "/machine_id", message: "is required when the workspace has no default_machine_id" }]
            })
          )
        }
        yield* workspaces.usableMachine(workspace.org_id, workspace.project_id, userId, machineId, field)
        return yield* machines.findById(machineId).pipe(
          someOrFail(() => new InvalidRequest({ error: `${field.slice(1)}: machine ${machineId} not found` }))
        )
      })

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

    /** A new agent config and agent of the project for the session, working in `path` on the machine. */
    const newAgent = (
      workspace: StoredWorkspace,
      source: Readonly<Record<string, unknown>>,
      path: string,
      branch: string | null,
      code: CodeSettings,
      metadata: Readonly<Record<string, unknown>>
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
        const agent = yield* agents.launch(workspace.org_id, workspace.project_id, {
          agent_config_id: created.config.id,
          metadata: { ...metadata }
        })
        return { agentId: agent.id as AgentId, configId: created.config.id as AgentConfigId }
      })

    /** Makes (or finds) the worktree on the machine, restoring a pending checkpoint there first; the stored row. */
    const placeWorktree = (workspace: StoredWorkspace, machine: StoredMachine, name: string | null) =>
      Effect.gen(function*() {
        const place = { repository: workspace.repository_url, workspace_id: workspace.id, name }
        const existing = yield* worktrees.named(workspace.id, name)
        if (Option.isSome(existing)) {
          const row = existing.value
          const elsewhere = row.machine_id !== null && row.machine_id !== machine.id &&
            (row.path !== null || row.checkpoint_restore_pending)
          if (elsewhere || row.worktree_type === "REMOTE") {
            return yield* Effect.fail(
              new Conflict({
                error: `Worktree ${row.id} is on ${row.worktree_type === "REMOTE" ? "a REMOTE sandbox" : `machine ${row.machine_id}`}` +
                  (row.checkpoint_restore_pending ? " (its checkpoint waits to be restored there)" : "") +
                  (row.worktree_type === "REMOTE"
                    ? `; start the session without machine_id to work in the sandbox, or migrate the worktree to LOCAL on machine ${machine.id} first`
                    : `; start the session there, or migrate the worktree to machine ${machine.id} first`)
              })
            )
          }
        }
        const pending = Option.filter(
          existing,
          (row) => row.checkpoint_restore_pending && row.machine_id === machine.id && row.current_checkpoint_id !== null
        )
        let location
        let restored = false
        if (Option.isSome(pending)) {
          const stored = yield* checkpoints.content(workspace.id, pending.value.current_checkpoint_id!)
          if (Option.isNone(stored)) return yield* Effect.dieMessage(`checkpoint ${pending.value.current_checkpoint_id} is missing`)
          location = yield* onMachine.restore(machine, place, Buffer.from(stored.value.content).toString("base64")).pipe(
            Effect.mapError(asSessionFailure)
          )
          restored = true
        } else {
          location = yield* onMachine.worktree(machine, place, workspace.base_ref).pipe(Effect.mapError(asSessionFailure))
        }
        if (Option.isSome(existing)) {
          const row = yield* worktrees.update(existing.value.id, {
            path: location.path,
            worktree_type: "LOCAL",
            machine_id: machine.id,
            user_machine_path_id: existing.value.user_machine_path_id ?? (yield* ids.make(UserMachinePathId)),
            ...(restored ? { checkpoint_restore_pending: false } : {})
          })
          return { row, location }
        }
        const inserted = yield* worktrees.insert({
          id: yield* ids.make(WorktreeId),
          workspace_id: workspace.id,
          is_main: false,
          name,
          worktree_type: "LOCAL",
          user_machine_path_id: yield* ids.make(UserMachinePathId),
          machine_id: machine.id
        }).pipe(Effect.orDie)
        const row = yield* worktrees.update(inserted.id, { path: location.path })
        return { row, location }
      })

    const launch = (workspaceId: WorkspaceId, input: LaunchSession) =>
      Effect.gen(function*() {
        const { userId, workspace } = yield* workspaces.own(workspaceId)
        yield* access.requireProjectAccess(workspace.org_id, workspace.project_id, "write").pipe(
          Effect.mapError((error) => new Forbidden({ error: error.error }))
        )
        const sessionNotFound = (id: string) => () => new NotFound({ error: `Session ${id} not found in workspace ${workspaceId}` })

        // An existing session, reused as it is.
        if (input.user_session_id !== undefined && input.user_session_id !== null) {
          const session = yield* sessions.find(workspace.id, input.user_session_id).pipe(
            someOrFail(sessionNotFound(input.user_session_id))
          )
          yield* prompt(workspace, session.agent_id, input.initial_prompt)
          return ok(workspace, session)
        }

        // A new session on an existing session's agent: the agent's worktree and machine.
        const previous = input.agent_session_id !== undefined && input.agent_session_id !== null
          ? Option.some(
            yield* sessions.byAgent(workspace.id, input.agent_session_id).pipe(
              someOrFail(() => new NotFound({ error: `Agent ${input.agent_session_id} is not the agent of a session of workspace ${workspaceId}` }))
            )
          )
          : input.resume_session_id !== undefined && input.resume_session_id !== null
          ? Option.some(
            yield* (Schema.is(WorkspaceSessionId)(input.resume_session_id)
              ? sessions.find(workspace.id, input.resume_session_id)
              : Effect.succeed(Option.none<StoredSession>())).pipe(
                someOrFail(sessionNotFound(input.resume_session_id))
              )
          )
          : Option.none<StoredSession>()
        /** A new session on the agent, worktree and machine of `earlier`. */
        const continuing = (earlier: StoredSession) =>
          Effect.gen(function*() {
            const session = yield* sessions.insert({
              id: yield* ids.make(WorkspaceSessionId),
              workspace_id: workspace.id,
              worktree_id: earlier.worktree_id,
              machine_id: earlier.machine_id,
              agent_id: earlier.agent_id,
              agent_config_id: earlier.agent_config_id,
              resume_session_id: input.resume_session_id ?? null,
              metadata: input.metadata ?? {}
            })
            yield* prompt(workspace, session.agent_id, input.initial_prompt)
            return ok(workspace, session)
          })
        if (Option.isSome(previous)) return yield* continuing(previous.value)

        // A worktree in a REMOTE sandbox: a new session on the sandbox's agent, which its migration started.
        const name = input.worktree_name ?? null
        const remote = Option.filter(yield* worktrees.named(workspace.id, name), (row) =>
          row.worktree_type === "REMOTE" && (input.machine_id === undefined || input.machine_id === null || input.machine_id === row.managed_machine_id))
        if (Option.isSome(remote)) {
          const sandbox = yield* sessions.latestOfWorktree(remote.value.id).pipe(
            Effect.flatMap(Option.match({
              onSome: Effect.succeed,
              onNone: () =>
                Effect.fail(new Conflict({ error: `Worktree ${remote.value.id} is REMOTE without a sandbox session; migrate it again` }))
            }))
          )
          return yield* continuing(sandbox)
        }

        const machine = yield* machineFor(workspace, userId, input.machine_id ?? workspace.default_machine_id, "/machine_id")
        if (name !== null && workspace.repository_url === null) {
          return yield* Effect.fail(
            new InvalidRequest({
              error: "worktree_name: the workspace has no repository (repository.url) to make a worktree of",
              issues: [{ path: "/worktree_name", message: "needs the workspace's repository.url" }]
            })
          )
        }
        const code = effectiveCode(yield* settings.get(userId), input.session_settings)
        yield* modelOf(code)
        const { location, row } = yield* placeWorktree(workspace, machine, name)
        const sessionId = yield* ids.make(WorkspaceSessionId)
        const { agentId, configId } = yield* newAgent(workspace, { machine_id: machine.id, cwd: location.path }, location.path, location.branch, code, {
          workspace_id: workspace.id,
          workspace_session_id: sessionId,
          worktree_id: row.id
        })
        const session = yield* sessions.insert({
          id: sessionId,
          workspace_id: workspace.id,
          worktree_id: row.id,
          machine_id: machine.id,
          agent_id: agentId,
          agent_config_id: configId,
          resume_session_id: null,
          metadata: input.metadata ?? {}
        })
        yield* prompt(workspace, agentId, input.initial_prompt)
        return ok(workspace, session)
      })

    /**
     * The agent of a REMOTE worktree: its config names the workspace's pool (one machine, started
     * at launch), with the caller's settings' model; the machine's path is not known yet, so the
     * instruction names `path` and the tools start in the machine's first directory.
     */
    const sandboxAgent = (workspace: StoredWorkspace, userId: UserId, path: string, branch: string | null) =>
      Effect.gen(function*() {
        const code = effectiveCode(yield* settings.get(userId), null)
        return yield* newAgent(
          workspace,
          { machine_pool_id: workspace.machine_pool_id, initial_num_machines: 1, max_machines: 1 },
          path,
          branch,
          code,
          { workspace_id: workspace.id }
        )
      })

    return { launch, sandboxAgent, modelFor: (userId: UserId) => Effect.flatMap(settings.get(userId), (user) => modelOf(effectiveCode(user, null))) } as const
  }),
  dependencies: [
    Workspaces.Default,
    WorktreesRepository.Default,
    WorkspaceSessionsRepository.Default,
    CheckpointsRepository.Default,
    MachinesRepository.Default,
    WorkspaceMachines.Default,
    UserSettings.Default,
    AgentConfigs.Default,
    Agents.Default,
    AgentInputs.Default,
    Access.Default,
    IdGenerator.Default
  ]
}) {}
