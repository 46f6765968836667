/**
 * Sessions of a workspace (`POST /api/v1/workspaces/{workspace_id}/sessions`, docs/workspaces.md):
 * a worktree made (or found) on a machine through its daemon, and an ordinary agent of the
 * workspace's project (SessionAgents) whose config puts its machine tools on that machine with
 * `cwd` = the worktree. The first input of the agent is the initial prompt. A worktree waiting for
 * a checkpoint restore on this machine is restored first; a session on a REMOTE worktree is one
 * more session of the agent its migration started in the sandbox. A worktree a migration holds
 * takes no new session (409 state_transition_conflict), and its sessions' agents no input.
 *
 * A session start places its worktree while it holds its workspace's placements (a hold recorded
 * on the workspace's row, so across server processes; renewed while it places, lapsing
 * PLACEMENT_HOLD_SECONDS after the last renewal): session starts of one workspace at once place
 * one after the other, each the worktree as the one before left it (made once, then reused).
 */
import { Clock, Context, Effect, Layer, Option, Schedule, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { Conflict, Forbidden, InvalidRequest, NotFound, StateTransitionConflict } from "../../domain/shared/Errors.ts"
import {
  type AgentId,
  type MachineId,
  UserMachinePathId,
  type UserId,
  type WorkspaceId,
  WorkspaceSessionId,
  WorktreeId
} from "../../domain/shared/Ids.ts"
import { type LaunchedSession, type LaunchSession, SessionMachineTimeout } from "../../domain/workspaces/Workspaces.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import type { StoredMachine } from "../machines/StoredMachine.ts"
import { someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import * as Leases from "../shared/Leases.ts"
import { Access } from "../tenancy/Access.ts"
import { SessionAgents } from "./SessionAgents.ts"
import { asSessionFailure, machineGone, WORKSPACE_ANSWER_TIMEOUT_SECONDS, WorkspaceMachines } from "./WorkspaceMachines.ts"
import { type StoredSession, WorkspaceSessionsRepository } from "./WorkspaceSessionsRepository.ts"
import { Workspaces } from "./Workspaces.ts"
import { type StoredWorkspace, WorkspacesRepository } from "./WorkspacesRepository.ts"
import { migrating, type StoredWorktree, WorktreesRepository } from "./WorktreesRepository.ts"

/** The project route of an agent's timeline. */
const eventsPath = (workspace: StoredWorkspace, agentId: AgentId) =>
  `/api/v1/orgs/${workspace.org_id}/projects/${workspace.project_id}/agents/${agentId}/events`

/**
 * How long a session start's hold on its workspace's placements lasts past its last renewal;
 * renewed every PLACEMENT_HOLD_RENEW_SECONDS while it places. A hold left by a server that stopped
 * mid-placing lapses after this long.
 */
export const PLACEMENT_HOLD_SECONDS = 60
export const PLACEMENT_HOLD_RENEW_SECONDS = 15

/**
 * How long a session start waits at most for the other session starts' placings of its workspace
 * (503 after): a placing runs at most the daemon's answer timeout, one whose server stopped lapses
 * with its hold.
 */
export const PLACEMENT_WAIT_SECONDS = WORKSPACE_ANSWER_TIMEOUT_SECONDS + PLACEMENT_HOLD_SECONDS

/** How often a session start waiting for another's placing tries to hold the workspace again. */
const PLACEMENT_RETRY = "50 millis"

const make = Effect.gen(function*() {
  const workspaces = yield* Workspaces
  const workspaceRows = yield* WorkspacesRepository
  const worktrees = yield* WorktreesRepository
  const sessions = yield* WorkspaceSessionsRepository
  const machines = yield* MachinesRepository
  const onMachine = yield* WorkspaceMachines
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

  /**
   * The machine a worktree lives on: a REMOTE one's sandbox; a LOCAL one's machine once it is
   * placed there or waits for a restore there; null when it is on no machine yet.
   */
  const machineOf = (row: StoredWorktree) =>
    row.worktree_type === "REMOTE"
      ? row.managed_machine_id
      : row.machine_id !== null && (row.path !== null || row.checkpoint_restore_pending)
      ? row.machine_id
      : null

  const beingMigrated = (row: StoredWorktree) =>
    new StateTransitionConflict({
      error: `Worktree ${row.id} is being migrated; start the session once the migration has finished ` +
        "(list the worktree to see the machine it is on then)"
    })

  /** Fails while a migration holds the worktree (docs/workspaces.md, "Migration"). */
  const requireNotMigrating = (row: StoredWorktree) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => migrating(row, now) ? Effect.fail(beingMigrated(row)) : Effect.void)

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

  /**
   * Runs `use` while this session start holds the workspace's placements, waiting (at most
   * PLACEMENT_WAIT_SECONDS) while another holds them. The hold is renewed while `use` runs and
   * released when it ends, however it ends; a wait interrupted leaves no hold.
   */
  const placing = <A, E, R>(workspace: StoredWorkspace, use: Effect.Effect<A, E, R>) =>
    Effect.scoped(Effect.gen(function*() {
      const holder = randomUUID()
      // Whether this start holds the placements now (a workspace deleted meanwhile: 404).
      const tryHold = Leases.held({
        what: `the placement hold on workspace ${workspace.id}`,
        take: workspaceRows.holdPlacement(workspace.id, holder, PLACEMENT_HOLD_SECONDS),
        renew: workspaceRows.renewPlacement(workspace.id, holder, PLACEMENT_HOLD_SECONDS),
        release: workspaceRows.releasePlacement(workspace.id, holder),
        renewEverySeconds: PLACEMENT_HOLD_RENEW_SECONDS
      }).pipe(
        Effect.flatMap((held) =>
          Option.isSome(held) ? Effect.succeed(true) : Effect.flatMap(workspaceRows.exists(workspace.id), (exists) =>
            exists ? Effect.succeed(false) : Effect.fail(new NotFound({ error: `Workspace ${workspace.id} not found` })))
        )
      )
      yield* tryHold.pipe(
        Effect.repeat({ schedule: Schedule.spaced(PLACEMENT_RETRY), until: (held) => held }),
        Effect.timeoutOrElse({
          duration: `${PLACEMENT_WAIT_SECONDS} seconds`,
          orElse: () =>
            Effect.fail(
              new SessionMachineTimeout({
                error: `Another session start of workspace ${workspace.id} has been placing a worktree for over ` +
                  `${PLACEMENT_WAIT_SECONDS} s; try again`
              })
            )
        })
      )
      return yield* use
    }))

  /** Makes (or finds) the worktree on the machine, restoring a pending checkpoint there first; the stored row. */
  const placeOnce = (workspace: StoredWorkspace, machine: StoredMachine, name: string | null) =>
    Effect.gen(function*() {
      const place = { repository: workspace.repository_url, workspace_id: workspace.id, name }
      const existing = yield* worktrees.named(workspace.id, name)
      if (Option.isSome(existing)) {
        const row = existing.value
        yield* requireNotMigrating(row)
        const placed = machineOf(row)
        if ((placed !== null && placed !== machine.id) || row.worktree_type === "REMOTE") {
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
      // The checkpoint waiting to be restored on this machine, if one is.
      const pending = Option.flatMap(existing, (row) =>
        row.checkpoint_restore_pending && row.machine_id === machine.id
          ? Option.fromNullishOr(row.current_checkpoint_id)
          : Option.none())
      const restored = Option.isSome(pending)
      const location = yield* (restored
        ? onMachine.restoreCheckpoint(machine, place, pending.value)
        : onMachine.worktree(machine, place, workspace.base_ref)).pipe(Effect.mapError(asSessionFailure))
      if (Option.isSome(existing)) {
        // A migration that took the worktree meanwhile decides where it is.
        const row = yield* worktrees.updateUnheld(existing.value.id, {
          path: location.path,
          worktree_type: "LOCAL",
          machine_id: machine.id,
          user_machine_path_id: existing.value.user_machine_path_id ?? (yield* ids.make(UserMachinePathId)),
          ...(restored ? { checkpoint_restore_pending: false } : {})
        })
        if (Option.isNone(row)) return yield* Effect.fail(beingMigrated(existing.value))
        return { row: row.value, location }
      }
      const inserted = yield* worktrees.insert({
        id: yield* ids.make(WorktreeId),
        workspace_id: workspace.id,
        is_main: false,
        name,
        worktree_type: "LOCAL",
        user_machine_path_id: yield* ids.make(UserMachinePathId),
        machine_id: machine.id
      })
      const row = yield* worktrees.update(inserted.id, { path: location.path })
      return { row, location }
    })

  /**
   * Makes (or finds) the worktree on the machine, restoring a pending checkpoint there first; the
   * stored row. One session start of the workspace at a time (`placing`), reading the worktree's
   * row once it holds the workspace: a worktree another start made meanwhile is found and reused.
   */
  const placeWorktree = (workspace: StoredWorkspace, machine: StoredMachine, name: string | null) =>
    placing(
      workspace,
      Effect.catchTag(placeOnce(workspace, machine, name), "UniqueViolation", () =>
        // A row of that name inserted meanwhile without the hold (a REMOTE migration's fresh worktree,
        // or a start whose hold had lapsed): placed again, by the rules of an existing worktree.
        placeOnce(workspace, machine, name).pipe(
          Effect.catchTag("UniqueViolation", () =>
            Effect.fail(
              new Conflict({
                error: `Worktree ${name ?? "main"} of workspace ${workspace.id} was being made by another request; ` +
                  "start the session again"
              })
            ))
        ))
    )

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
      const { location, row } = yield* placeWorktree(workspace, machine, name)
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
      WorkspaceMachines.layer,
      SessionAgents.layer,
      Access.layer,
      IdGenerator.layer,
      WorkspacesRepository.layer
    ])
  )
}
