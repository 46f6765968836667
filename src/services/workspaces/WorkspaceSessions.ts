/**
 * Sessions of a workspace (`POST /api/v1/workspaces/{workspace_id}/sessions`, docs/workspaces.md):
 * a worktree made (or found) on a machine through its daemon, and an ordinary agent of the
 * workspace's project (SessionAgents) whose config puts its machine tools on that machine with
 * `cwd` = the worktree. The first input of the agent is the initial prompt. A worktree waiting for
 * a checkpoint restore on this machine is restored first; a session on a REMOTE worktree is one
 * more session of the agent its migration started in the sandbox. A worktree a migration holds
 * takes no new session (409 state_transition_conflict), and its sessions' agents no input.
 * WorktreePlacements places a new agent's worktree on its machine, one session start of the
 * workspace at a time.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { Conflict, Forbidden, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import { type AgentId, type MachineId, type UserId, type WorkspaceId, WorkspaceSessionId } from "../../domain/shared/Ids.ts"
import type { LaunchedSession, LaunchSession } from "../../domain/workspaces/Workspaces.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import type { StoredMachine } from "../machines/StoredMachine.ts"
import { someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { Access } from "../tenancy/Access.ts"
import { SessionAgents } from "./SessionAgents.ts"
import { machineGone } from "./WorkspaceMachines.ts"
import { type StoredSession, WorkspaceSessionsRepository } from "./WorkspaceSessionsRepository.ts"
import { Workspaces } from "./Workspaces.ts"
import type { StoredWorkspace } from "./WorkspacesRepository.ts"
import { machineOf, requireNotMigrating, WorktreePlacements } from "./WorktreePlacements.ts"
import { type StoredWorktree, WorktreesRepository } from "./WorktreesRepository.ts"

/** The project route of an agent's timeline. */
const eventsPath = (workspace: StoredWorkspace, agentId: AgentId) =>
  `/api/v1/orgs/${workspace.org_id}/projects/${workspace.project_id}/agents/${agentId}/events`

const make = Effect.gen(function*() {
  const workspaces = yield* Workspaces
  const worktrees = yield* WorktreesRepository
  const sessions = yield* WorkspaceSessionsRepository
  const machines = yield* MachinesRepository
  const placements = yield* WorktreePlacements
  const sessionAgents = yield* SessionAgents
  const access = yield* Access
  const ids = yield* IdGenerator

  const ok = (
    workspace: StoredWorkspace,
    session: Pick<StoredSession, "id" | "agent_id" | "worktree_id" | "machine_id">
  ): LaunchedSession => ({
    status: "ok",
    payload: {
      session_id: session.id,
      agent_id: session.agent_id,
      worktree_id: session.worktree_id,
      machine_id: session.machine_id,
      events_path: eventsPath(workspace, session.agent_id)
    }
  })

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

  /** Fails when the REMOTE worktree's sandbox was deleted (its files went with it). */
  const requireSandbox = (row: StoredWorktree) =>
    Effect.gen(function*() {
      const sandbox = row.managed_machine_id === null
        ? Option.none<StoredMachine>()
        : yield* machines.findById(row.managed_machine_id)
      if (machineGone(sandbox)) {
        return yield* Effect.fail(
          new Conflict({
            error: `The sandbox of worktree ${row.id} was deleted; migrate the worktree to LOCAL ` +
              "(its last checkpoint is restored there) to work on it again"
          })
        )
      }
    })

  /** The caller's workspace, once they may write in its project. */
  const writableWorkspace = (workspaceId: WorkspaceId) =>
    Effect.gen(function*() {
      const owned = yield* workspaces.own(workspaceId)
      yield* access.requireProjectAccess(owned.workspace.org_id, owned.workspace.project_id, "write").pipe(
        Effect.mapError((error) => new Forbidden({ error: error.error }))
      )
      return owned
    })

  const sessionNotFound = (workspace: StoredWorkspace, id: string) => () =>
    new NotFound({ error: `Session ${id} not found in workspace ${workspace.id}` })

  /** An existing session, reused as it is: the prompt goes to its agent. */
  const reuseSession = (workspace: StoredWorkspace, sessionId: WorkspaceSessionId, prompt: LaunchSession["initial_prompt"]) =>
    Effect.gen(function*() {
      const session = yield* sessions.find(workspace.id, sessionId).pipe(someOrFail(sessionNotFound(workspace, sessionId)))
      yield* sessionAgents.prompt(workspace, session.agent_id, prompt)
      return ok(workspace, session)
    })

  /** The session a new session continues on the same agent: the agent_session_id's, or the resumed one; none for a new agent. */
  const earlierSession = (workspace: StoredWorkspace, input: LaunchSession) =>
    Effect.gen(function*() {
      if (input.agent_session_id !== undefined && input.agent_session_id !== null) {
        return Option.some(
          yield* sessions.byAgent(workspace.id, input.agent_session_id).pipe(
            someOrFail(() => new NotFound({ error: `Agent ${input.agent_session_id} is not the agent of a session of workspace ${workspace.id}` }))
          )
        )
      }
      if (input.resume_session_id !== undefined && input.resume_session_id !== null) {
        return Option.some(
          yield* (Schema.is(WorkspaceSessionId)(input.resume_session_id)
            ? sessions.find(workspace.id, input.resume_session_id)
            : Effect.succeed(Option.none<StoredSession>())).pipe(
              someOrFail(sessionNotFound(workspace, input.resume_session_id))
            )
        )
      }
      return Option.none<StoredSession>()
    })

  /** A new session on the agent, worktree and machine of `earlier`, while the worktree is still on that machine. */
  const continuing = (workspace: StoredWorkspace, earlier: StoredSession, input: LaunchSession) =>
    Effect.gen(function*() {
      const worktree = yield* worktrees.find(earlier.worktree_id)
      if (Option.isNone(worktree)) return yield* Effect.die(new Error(`worktree ${earlier.worktree_id} is missing`))
      yield* requireNotMigrating(worktree.value)
      const placed = machineOf(worktree.value)
      if (placed !== null && placed !== earlier.machine_id) {
        return yield* Effect.fail(
          new Conflict({
            error: `Worktree ${worktree.value.id} is on machine ${placed} now` +
              (worktree.value.worktree_type === "REMOTE" ? " (its REMOTE sandbox)" : "") +
              `; the agent of session ${earlier.id} works on machine ${earlier.machine_id}, in the copy left there. ` +
              (worktree.value.worktree_type === "REMOTE"
                ? "Start a session with its worktree_name and without machine_id to work in the sandbox"
                : `Start a session on machine ${placed} with its worktree_name`) +
              `, or migrate the worktree back to machine ${earlier.machine_id} first`
          })
        )
      }
      if (worktree.value.worktree_type === "REMOTE") yield* requireSandbox(worktree.value)
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
      yield* sessionAgents.prompt(workspace, session.agent_id, input.initial_prompt)
      return ok(workspace, session)
    })

  /**
   * The latest session of the REMOTE worktree of that name (on the named machine, if one is
   * named): its sandbox's agent, which its migration started. None when the worktree is not REMOTE.
   */
  const sandboxSession = (workspace: StoredWorkspace, name: string | null, machineId: LaunchSession["machine_id"]) =>
    Effect.gen(function*() {
      const remote = Option.filter(yield* worktrees.named(workspace.id, name), (row) =>
        row.worktree_type === "REMOTE" && (machineId === undefined || machineId === null || machineId === row.managed_machine_id))
      if (Option.isNone(remote)) return Option.none<StoredSession>()
      yield* requireNotMigrating(remote.value)
      yield* requireSandbox(remote.value)
      return Option.some(
        yield* sessions.latestOfWorktree(remote.value.id).pipe(
          someOrFail(() => new Conflict({ error: `Worktree ${remote.value.id} is REMOTE without a sandbox session; migrate it again` }))
        )
      )
    })

  /** A new agent on the machine, working in the worktree of that name placed there (made, found or restored). */
  const newAgentSession = (workspace: StoredWorkspace, userId: UserId, name: string | null, input: LaunchSession) =>
    Effect.gen(function*() {
      const machine = yield* machineFor(workspace, userId, input.machine_id ?? workspace.default_machine_id, "/machine_id")
      if (name !== null && workspace.repository_url === null) {
        return yield* Effect.fail(
          new InvalidRequest({
            error: "worktree_name: the workspace has no repository (repository.url) to make a worktree of",
            issues: [{ path: "/worktree_name", message: "needs the workspace's repository.url" }]
          })
        )
      }
      const code = yield* sessionAgents.codeFor(userId, input.session_settings)
      const { location, row } = yield* placements.placeWorktree(workspace, machine, name)
      // The agent, its session's row and its prompt: all three or none (docs/workspaces.md).
      const session = {
        id: yield* ids.make(WorkspaceSessionId),
        workspace_id: workspace.id,
        worktree_id: row.id,
        machine_id: machine.id,
        resume_session_id: null,
        metadata: input.metadata ?? {}
      }
      const { agentId } = yield* sessionAgents.newAgent(
        workspace,
        { machine_id: machine.id, cwd: location.path },
        location.path,
        location.branch,
        code,
        { workspace_id: workspace.id, workspace_session_id: session.id, worktree_id: row.id },
        {
          prompt: input.initial_prompt,
          alongside: ({ agentId, configId }) => sessions.insert({ ...session, agent_id: agentId, agent_config_id: configId })
        }
      )
      return ok(workspace, { ...session, agent_id: agentId })
    })

  /**
   * An existing session reused; else a new session on an earlier session's agent, or on the
   * sandbox's agent of a REMOTE worktree; else a new agent on the machine.
   */
  const launch = (workspaceId: WorkspaceId, input: LaunchSession) =>
    Effect.gen(function*() {
      const { userId, workspace } = yield* writableWorkspace(workspaceId)
      if (input.user_session_id !== undefined && input.user_session_id !== null) {
        return yield* reuseSession(workspace, input.user_session_id, input.initial_prompt)
      }
      const earlier = yield* earlierSession(workspace, input)
      if (Option.isSome(earlier)) return yield* continuing(workspace, earlier.value, input)
      const name = input.worktree_name ?? null
      const sandbox = yield* sandboxSession(workspace, name, input.machine_id)
      if (Option.isSome(sandbox)) return yield* continuing(workspace, sandbox.value, input)
      return yield* newAgentSession(workspace, userId, name, input)
    })

  return { launch } as const
})

export class WorkspaceSessions extends Context.Service<WorkspaceSessions, Effect.Success<typeof make>>()("WorkspaceSessions") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      Workspaces.layer,
      WorktreesRepository.layer,
      WorkspaceSessionsRepository.layer,
      MachinesRepository.layer,
      WorktreePlacements.layer,
      SessionAgents.layer,
      Access.layer,
      IdGenerator.layer
    ])
  )
}
