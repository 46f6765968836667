/**
 * Worktree migration (`POST /api/v1/worktrees/{worktree_id}/migrate`, docs/workspaces.md,
 * "Migration"). The worktree's current machine, when its daemon is connected, packs the worktree
 * into a checkpoint (`checkpoint.create`), which the server stores (`sha256:` of its bytes) and
 * makes the worktree's current one (a machine deleted since, such as a REMOTE worktree's sandbox:
 * the worktree's last stored checkpoint is used):
 *
 * - LOCAL: the worktree moves to `target_machine_id` (a machine the user may use in the project,
 *   online); the checkpoint is restored there at the next session start (checkpoint_restore_pending).
 * - REMOTE: a machine of the workspace's pool, started for an agent of the worktree; the checkpoint
 *   is restored there at once (or a fresh worktree made from the base ref, with sync_enabled).
 *
 * A migration holds the worktree while it runs (MigrationHolds: a hold recorded on its row, renewed
 * while it runs and lapsing after the last renewal, so a server that stops mid-migration frees it
 * by itself): another migration, a new session and an input to its sessions' agents are
 * 409 state_transition_conflict meanwhile. Refused, too, while a session's agent of the worktree
 * is in a turn (409 state_transition_conflict). A worktree that leaves a sandbox with its work
 * packed into a checkpoint gives the sandbox's machine back to its pool.
 */
import { Context, Effect, Layer, Option } from "effect"
import { Conflict, DaemonRuntimeUnregistered, InvalidRequest } from "../../domain/shared/Errors.ts"
import {
  type AgentId,
  type MachineId,
  type MachinePoolId,
  type UserId,
  UserMachinePathId,
  WorkspaceSessionId,
  type WorktreeId,
  WorktreeId as WorktreeIdSchema
} from "../../domain/shared/Ids.ts"
import type { MigrateWorktree } from "../../domain/workspaces/Workspaces.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import type { StoredMachine } from "../machines/StoredMachine.ts"
import { replaceFailure } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { Access } from "../tenancy/Access.ts"
import { asApiFailure, WorkspaceMachines } from "./WorkspaceMachines.ts"
import { MigrationHolds } from "./MigrationHolds.ts"
import { SessionAgents } from "./SessionAgents.ts"
import { WorkspaceSessionsRepository } from "./WorkspaceSessionsRepository.ts"
import { currentCheckpoint, noCheckpoint, type Packed, packedOn, WorktreeCheckpoints } from "./WorktreeCheckpoints.ts"
import { WorktreeSandboxes } from "./WorktreeSandboxes.ts"
import { Workspaces } from "./Workspaces.ts"
import type { StoredWorkspace } from "./WorkspacesRepository.ts"
import { type StoredWorktree, toDescriptor, type WorktreeChange, WorktreesRepository } from "./WorktreesRepository.ts"

const make = Effect.gen(function*() {
  const workspaces = yield* Workspaces
  const worktrees = yield* WorktreesRepository
  const sessions = yield* WorkspaceSessionsRepository
  const machines = yield* MachinesRepository
  const onMachine = yield* WorkspaceMachines
  const access = yield* Access
  const ids = yield* IdGenerator
  const sessionAgents = yield* SessionAgents
  const sandboxes = yield* WorktreeSandboxes
  const holds = yield* MigrationHolds
  const worktreeCheckpoints = yield* WorktreeCheckpoints

  /**
   * The worktree a REMOTE move places: a fresh one named `worktreeName` (source base_ref with a
   * name other than the worktree's), else the worktree itself.
   */
  const remoteTarget = (
    workspace: StoredWorkspace,
    worktree: StoredWorktree,
    source: NonNullable<MigrateWorktree["source"]>,
    worktreeName: MigrateWorktree["worktree_name"]
  ) =>
    Effect.gen(function*() {
      const fresh = source === "base_ref" && worktreeName !== undefined && worktreeName !== null &&
        worktreeName !== worktree.name
      if (!fresh) return { fresh, target: worktree }
      const target = yield* worktrees.insert({
        id: yield* ids.make(WorktreeIdSchema),
        workspace_id: workspace.id,
        is_main: false,
        name: worktreeName,
        worktree_type: null,
        user_machine_path_id: null,
        machine_id: null
      }).pipe(
        replaceFailure("UniqueViolation", () => new Conflict({ error: `Workspace ${workspace.id} has a worktree named ${worktreeName} already` }))
      )
      return { fresh, target }
    })

  /**
   * The machine the pool started for the agent, once its daemon is connected, with the worktree
   * placed there: the checkpoint `restoring` restored, or, with none, a fresh worktree made from
   * the base ref and packed into its first checkpoint.
   */
  const placeInSandbox = (
    workspace: StoredWorkspace,
    poolId: MachinePoolId,
    agentId: AgentId,
    target: StoredWorktree,
    restoring: string | null
  ) =>
    Effect.gen(function*() {
      const machine = yield* sandboxes.poolMachineOf(poolId, agentId)
      const place = { repository: workspace.repository_url, workspace_id: workspace.id, name: target.name }
      if (restoring !== null) {
        const location = yield* onMachine.restoreCheckpoint(machine, place, restoring).pipe(Effect.mapError(asApiFailure))
        return { machine, location, first: Option.none<Packed>() }
      }
      const location = yield* onMachine.worktree(machine, place, workspace.base_ref).pipe(Effect.mapError(asApiFailure))
      // Its first checkpoint: what a migration out of the sandbox uses once the sandbox is gone.
      const first = yield* worktreeCheckpoints.packOn(workspace, machine, location.path).pipe(
        Effect.map(Option.some),
        Effect.catch((failure) =>
          Effect.as(
            Effect.logWarning(`worktree ${target.id}: its first checkpoint could not be made: ${failure.message}`),
            Option.none<Packed>()
          )
        )
      )
      return { machine, location, first }
    })

  /** The worktree's columns once it is in the sandbox: `restoring` its current checkpoint, if one was restored, and `packed` if one was made. */
  const inSandbox = (
    { location, machine }: { readonly location: { readonly path: string }; readonly machine: StoredMachine },
    restoring: string | null,
    packed: Option.Option<Packed>
  ): WorktreeChange => ({
    worktree_type: "REMOTE",
    machine_id: null,
    path: location.path,
    managed_machine_id: machine.id,
    last_heartbeat_at: machine.last_seen_at,
    checkpoint_restore_pending: false,
    ...(restoring !== null ? { current_checkpoint_id: restoring } : {}),
    ...(Option.isSome(packed) ? currentCheckpoint(packed.value) : {})
  })

  /**
   * REMOTE: an agent of the project whose config names the workspace's pool (one machine,
   * started at its launch); once that machine's daemon is connected, the checkpoint is restored
   * there (source checkpoint) or a fresh worktree is made from the base ref (source base_ref)
   * and packed into its first checkpoint. The sandbox the worktree left is given back to its
   * pool; a machine started for a migration that failed, too.
   */
  const toRemote = (
    workspace: StoredWorkspace,
    worktree: StoredWorktree,
    migrationId: string,
    userId: UserId,
    input: MigrateWorktree
  ) =>
    Effect.gen(function*() {
      const poolId = workspace.machine_pool_id!
      const source = input.source ?? "checkpoint"
      yield* sessionAgents.codeFor(userId, null)
      const checkpoint = source === "checkpoint" ? yield* worktreeCheckpoints.takeCheckpoint(workspace, worktree) : Option.none<Packed>()
      const currentId = Option.isSome(checkpoint) ? checkpoint.value.id : worktree.current_checkpoint_id
      if (source === "checkpoint" && currentId === null) return yield* noCheckpoint(worktree)
      // Not null when the source is the checkpoint: checked above.
      const restoring = source === "checkpoint" ? currentId : null
      const { fresh, target } = yield* remoteTarget(workspace, worktree, source, input.worktree_name)
      // A fresh worktree whose making fails is forgotten, so the same name can be tried again.
      const forgetFresh = fresh ? worktrees.removeUnplaced(target.id) : Effect.void
      const { agentId, configId } = yield* sessionAgents.sandboxAgent(workspace, userId, target.name).pipe(
        Effect.onError(() => forgetFresh)
      )
      // Not made: the machine started for it is given back, and a fresh worktree forgotten.
      const undoOnFailure = <A, E, R>(step: Effect.Effect<A, E, R>) =>
        step.pipe(
          Effect.tapCause(() => sandboxes.releaseAgentMachines(poolId, agentId)),
          Effect.onError(() => forgetFresh)
        )
      const placed = yield* undoOnFailure(placeInSandbox(workspace, poolId, agentId, target, restoring))
      const change = inSandbox(placed, restoring, Option.orElse(checkpoint, () => placed.first))
      const sessionId = yield* ids.make(WorkspaceSessionId)
      // The move, the sandbox's session and the sandbox left behind, together: a server stopped
      // in between had left a REMOTE worktree without its sandbox's session (no session could
      // start on it), or the sandbox it left running and counted against its pool.
      const { left, updated } = yield* undoOnFailure(holds.recordMove(workspace, worktree, agentId, Effect.gen(function*() {
        const updated = fresh ? yield* worktrees.update(target.id, change) : yield* holds.finish(worktree, migrationId, change)
        yield* sessions.insert({
          id: sessionId,
          workspace_id: workspace.id,
          worktree_id: target.id,
          machine_id: placed.machine.id,
          agent_id: agentId,
          agent_config_id: configId,
          resume_session_id: null,
          metadata: { migration: "REMOTE" }
        })
        // The worktree itself moved with its work packed: the sandbox it left is not needed any more.
        const left = fresh ? Option.none<StoredMachine>() : yield* sandboxes.leaveSandbox(worktree, packedOn(checkpoint))
        return { left, updated }
      })))
      yield* sandboxes.stopLeft(left)
      return { worktree: toDescriptor(updated), status: "migrated" as const }
    })

  /** LOCAL: the worktree moves to the target machine, restored there at the next session (checkpoint_restore_pending). */
  const toLocal = (workspace: StoredWorkspace, worktree: StoredWorktree, migrationId: string, targetId: MachineId) =>
    Effect.gen(function*() {
      const checkpoint = yield* worktreeCheckpoints.takeCheckpoint(workspace, worktree)
      const currentId = Option.isSome(checkpoint) ? checkpoint.value.id : worktree.current_checkpoint_id
      if (currentId === null) return yield* noCheckpoint(worktree)
      const change: WorktreeChange = {
        worktree_type: "LOCAL",
        machine_id: targetId,
        user_machine_path_id: worktree.user_machine_path_id ?? (yield* ids.make(UserMachinePathId)),
        path: null,
        managed_machine_id: null,
        last_heartbeat_at: null,
        current_checkpoint_id: currentId,
        ...(Option.isSome(checkpoint) ? currentCheckpoint(checkpoint.value) : {}),
        checkpoint_restore_pending: true
      }
      const { left, updated } = yield* holds.recordMove(workspace, worktree, null, Effect.gen(function*() {
        const updated = yield* holds.finish(worktree, migrationId, change)
        return { left: yield* sandboxes.leaveSandbox(worktree, packedOn(checkpoint)), updated }
      }))
      yield* sandboxes.stopLeft(left)
      return { worktree: toDescriptor(updated), status: "migrated" as const }
    })

  const migrate = (worktreeId: WorktreeId, input: MigrateWorktree) =>
    Effect.gen(function*() {
      const { userId, workspace, worktree } = yield* workspaces.ownWorktree(worktreeId)
      yield* access.requireProjectAccess(workspace.org_id, workspace.project_id, "write")

      if (input.target_type === "REMOTE") {
        if ((input.source ?? "checkpoint") === "base_ref" && !workspace.sync_enabled) {
          return yield* Effect.fail(
            new Conflict({
              error: `A fresh REMOTE worktree from the base ref needs sync_enabled on workspace ${workspace.id}`
            })
          )
        }
        if (workspace.machine_pool_id === null) {
          return yield* Effect.fail(
            new InvalidRequest({
              error: `Workspace ${workspace.id} has no machine_pool_id: a REMOTE worktree runs on a machine of its pool`,
              issues: [{ path: "/target_type", message: "REMOTE needs the workspace's machine_pool_id" }]
            })
          )
        }
        return yield* holds.held(worktree, (row, migrationId) => toRemote(workspace, row, migrationId, userId, input))
      }

      // LOCAL
      const remoteOnly = [
        ...(input.source !== undefined ? ["source"] : []),
        ...(input.worktree_name !== undefined && input.worktree_name !== null ? ["worktree_name"] : [])
      ]
      if (remoteOnly.length > 0) {
        return yield* Effect.fail(
          new InvalidRequest({
            error: `${remoteOnly.join(" and ")}: only a REMOTE migration takes ${remoteOnly.length > 1 ? "them" : "it"}; ` +
              "a LOCAL one moves the worktree as it is with its checkpoint: leave them out",
            issues: remoteOnly.map((field) => ({ path: `/${field}`, message: "is allowed only when target_type is REMOTE" }))
          })
        )
      }
      const targetId = input.target_machine_id ?? null
      if (targetId === null) {
        return yield* Effect.fail(
          new InvalidRequest({
            error: "target_machine_id is required to migrate to LOCAL",
            issues: [{ path: "/target_machine_id", message: "is required when target_type is LOCAL" }]
          })
        )
      }
      yield* workspaces.usableMachine(workspace.org_id, workspace.project_id, userId, targetId, "/target_machine_id")
      const target = yield* machines.findById(targetId)
      if (Option.isNone(target) || !target.value.online) {
        return yield* Effect.fail(
          new DaemonRuntimeUnregistered({ error: `No daemon of machine ${targetId} is connected; start it and migrate again` })
        )
      }
      return yield* holds.held(worktree, (row, migrationId) => toLocal(workspace, row, migrationId, targetId))
    })

  return { migrate } as const
})

export class WorktreeMigrations extends Context.Service<WorktreeMigrations, Effect.Success<typeof make>>()("WorktreeMigrations") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      Workspaces.layer,
      WorktreesRepository.layer,
      WorkspaceSessionsRepository.layer,
      MachinesRepository.layer,
      WorkspaceMachines.layer,
      Access.layer,
      IdGenerator.layer,
      SessionAgents.layer,
      WorktreeSandboxes.layer,
      MigrationHolds.layer,
      WorktreeCheckpoints.layer
    ])
  )
}
