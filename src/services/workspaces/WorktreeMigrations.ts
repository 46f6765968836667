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
 * Refused while a session's agent of the worktree is in a turn (409 state_transition_conflict).
 */
import { Context, Effect, Layer, Option } from "effect"
import {
  Conflict,
  DaemonRuntimeUnregistered,
  InvalidRequest,
  ServiceUnavailable,
  StateTransitionConflict
} from "../../domain/shared/Errors.ts"
import {
  type AgentId,
  type MachinePoolId,
  type UserId,
  UserMachinePathId,
  WorkspaceSessionId,
  type WorktreeId,
  WorktreeId as WorktreeIdSchema
} from "../../domain/shared/Ids.ts"
import type { MigrateWorktree } from "../../domain/workspaces/Workspaces.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import { PROVISIONING_TIMEOUT_SECONDS } from "../machines/PoolMachines.ts"
import type { StoredMachine } from "../machines/StoredMachine.ts"
import { replaceFailure } from "../shared/Failures.ts"
import { sha256 } from "../shared/Hash.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { Access } from "../tenancy/Access.ts"
import { CheckpointsRepository } from "./CheckpointsRepository.ts"
import { asApiFailure, machineGone, WorkspaceMachines } from "./WorkspaceMachines.ts"
import { SessionAgents } from "./SessionAgents.ts"
import { WorkspaceSessionsRepository } from "./WorkspaceSessionsRepository.ts"
import { Workspaces } from "./Workspaces.ts"
import type { StoredWorkspace } from "./WorkspacesRepository.ts"
import { type StoredWorktree, toDescriptor, WorktreesRepository } from "./WorktreesRepository.ts"

const make = Effect.gen(function*() {
  const workspaces = yield* Workspaces
  const worktrees = yield* WorktreesRepository
  const sessions = yield* WorkspaceSessionsRepository
  const checkpoints = yield* CheckpointsRepository
  const machines = yield* MachinesRepository
  const onMachine = yield* WorkspaceMachines
  const access = yield* Access
  const ids = yield* IdGenerator
  const sessionAgents = yield* SessionAgents

  /** A pool machine offline: its daemon cannot be started by the user, only come back or the machine be deleted. */
  const sandboxOffline = (workspace: StoredWorkspace, worktree: StoredWorktree, machine: StoredMachine) =>
    new DaemonRuntimeUnregistered({
      error: `The sandbox of worktree ${worktree.id} (machine ${machine.id} of pool ${machine.machine_pool_id}) is ` +
        "offline, so its work cannot be packed into a checkpoint. Migrate again once its daemon is back; or, to give " +
        "up its work since the worktree's last checkpoint, have an administrator of the organization delete the " +
        `machine (DELETE /api/v1/orgs/${workspace.org_id}/machines/${machine.id}) and migrate again: the last ` +
        "checkpoint is used then"
    })

  /**
   * A checkpoint of the worktree as it is now, made by its machine's daemon and stored; none
   * when the worktree is on no machine (no path yet, or its machine deleted: the worktree's last
   * stored checkpoint is all there is). The source machine offline is 409.
   */
  const takeCheckpoint = (workspace: StoredWorkspace, worktree: StoredWorktree) =>
    Effect.gen(function*() {
      const sourceId = worktree.worktree_type === "REMOTE" ? worktree.managed_machine_id : worktree.machine_id
      if (worktree.path === null || sourceId === null) return Option.none<{ id: string; metadata: Record<string, unknown> }>()
      const source = yield* machines.findById(sourceId)
      if (Option.isNone(source) || machineGone(source)) return Option.none()
      const packed = yield* onMachine.checkpoint(source.value, worktree.path).pipe(
        Effect.mapError((failure) =>
          failure.kind === "offline" && source.value.machine_pool_id !== null
            ? sandboxOffline(workspace, worktree, source.value)
            : asApiFailure(failure)
        )
      )
      const bytes = Buffer.from(packed.content, "base64")
      const id = sha256(bytes)
      const metadata = {
        format: packed.manifest.format,
        branch: packed.manifest.branch,
        commit: packed.manifest.head,
        uncommitted_changes: packed.manifest.stash !== null,
        untracked_files: packed.manifest.untracked_files.length,
        size: bytes.byteLength,
        source_machine_id: source.value.id
      }
      yield* checkpoints.store(workspace.id, id, bytes, metadata)
      return Option.some({ id, metadata })
    })

  /** The pool machine the pool started for the agent, once its daemon is connected. */
  const poolMachineOf = (poolId: MachinePoolId, agentId: AgentId) =>
    Effect.gen(function*() {
      const deadline = Date.now() + PROVISIONING_TIMEOUT_SECONDS * 1000
      while (Date.now() < deadline) {
        const running = yield* machines.poolMachines(poolId, ["running"])
        const mine = running.find((machine) => machine.agent_id === agentId && machine.online)
        if (mine !== undefined) return mine
        yield* Effect.sleep("500 millis")
      }
      return yield* Effect.fail(
        new ServiceUnavailable({
          error: `The machine pool ${poolId} started no machine for the worktree within ${PROVISIONING_TIMEOUT_SECONDS} s`
        })
      )
    })

  /**
   * REMOTE: an agent of the project whose config names the workspace's pool (one machine,
   * started at its launch); once that machine's daemon is connected, the checkpoint is restored
   * there (source checkpoint) or a fresh worktree is made from the base ref (source base_ref).
   */
  const toRemote = (workspace: StoredWorkspace, worktree: StoredWorktree, userId: UserId, input: MigrateWorktree) =>
    Effect.gen(function*() {
      const poolId = workspace.machine_pool_id!
      const source = input.source ?? "checkpoint"
      yield* sessionAgents.codeFor(userId, null)
      const checkpoint = source === "checkpoint" ? yield* takeCheckpoint(workspace, worktree) : Option.none()
      const currentId = Option.isSome(checkpoint) ? checkpoint.value.id : worktree.current_checkpoint_id
      if (source === "checkpoint" && currentId === null) {
        return yield* Effect.fail(
          new Conflict({ error: `Worktree ${worktree.id} has no checkpoint and is on no machine yet: start a session on it first` })
        )
      }
      const fresh = source === "base_ref" && input.worktree_name !== undefined && input.worktree_name !== null &&
        input.worktree_name !== worktree.name
      const name = fresh ? input.worktree_name! : worktree.name
      const target = fresh
        ? yield* worktrees.insert({
          id: yield* ids.make(WorktreeIdSchema),
          workspace_id: workspace.id,
          is_main: false,
          name,
          worktree_type: null,
          user_machine_path_id: null,
          machine_id: null
        }).pipe(
          replaceFailure("UniqueViolation", () => new Conflict({ error: `Workspace ${workspace.id} has a worktree named ${name} already` }))
        )
        : worktree
      const { agentId, configId } = yield* sessionAgents.sandboxAgent(workspace, userId, name ?? "(main)", name)
      const machine = yield* poolMachineOf(poolId, agentId)
      const place = { repository: workspace.repository_url, workspace_id: workspace.id, name }
      const location = source === "checkpoint"
        ? yield* Effect.flatMap(
          checkpoints.content(workspace.id, currentId!),
          Option.match({
            onNone: () => Effect.dieMessage(`checkpoint ${currentId} is missing`),
            onSome: (stored) =>
              onMachine.restore(machine, place, Buffer.from(stored.content).toString("base64")).pipe(Effect.mapError(asApiFailure))
          })
        )
        : yield* onMachine.worktree(machine, place, workspace.base_ref).pipe(Effect.mapError(asApiFailure))
      const updated = yield* worktrees.update(target.id, {
        worktree_type: "REMOTE",
        machine_id: null,
        path: location.path,
        managed_machine_id: machine.id,
        last_heartbeat_at: machine.last_seen_at,
        checkpoint_restore_pending: false,
        ...(source === "checkpoint" ? { current_checkpoint_id: currentId } : {}),
        ...(Option.isSome(checkpoint)
          ? { last_synced_checkpoint_id: checkpoint.value.id, checkpoint_metadata: checkpoint.value.metadata }
          : {})
      })
      yield* sessions.insert({
        id: yield* ids.make(WorkspaceSessionId),
        workspace_id: workspace.id,
        worktree_id: target.id,
        machine_id: machine.id,
        agent_id: agentId,
        agent_config_id: configId,
        resume_session_id: null,
        metadata: { migration: "REMOTE" }
      })
      return { worktree: toDescriptor(updated), status: "migrated" as const }
    })

  const migrate = (worktreeId: WorktreeId, input: MigrateWorktree) =>
    Effect.gen(function*() {
      const { userId, workspace, worktree } = yield* workspaces.ownWorktree(worktreeId)
      yield* access.requireProjectAccess(workspace.org_id, workspace.project_id, "write")
      if (yield* sessions.busy(worktree.id)) {
        return yield* Effect.fail(
          new StateTransitionConflict({
            error: `A session's agent of worktree ${worktree.id} is in a turn; wait for it to finish (or cancel it) and migrate then`
          })
        )
      }

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
        return yield* toRemote(workspace, worktree, userId, input)
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
      const checkpoint = yield* takeCheckpoint(workspace, worktree)
      const currentId = Option.isSome(checkpoint) ? checkpoint.value.id : worktree.current_checkpoint_id
      if (currentId === null) {
        return yield* Effect.fail(
          new Conflict({
            error: `Worktree ${worktree.id} has no checkpoint and is on no machine yet: start a session on it first`
          })
        )
      }
      const updated = yield* worktrees.update(worktree.id, {
        worktree_type: "LOCAL",
        machine_id: targetId,
        user_machine_path_id: worktree.user_machine_path_id ?? (yield* ids.make(UserMachinePathId)),
        path: null,
        managed_machine_id: null,
        last_heartbeat_at: null,
        current_checkpoint_id: currentId,
        ...(Option.isSome(checkpoint)
          ? { last_synced_checkpoint_id: checkpoint.value.id, checkpoint_metadata: checkpoint.value.metadata }
          : {}),
        checkpoint_restore_pending: true
      })
      return { worktree: toDescriptor(updated), status: "migrated" as const }
    })

  return { migrate } as const
})

export class WorktreeMigrations extends Context.Tag("WorktreeMigrations")<WorktreeMigrations, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      Workspaces.layer,
      WorktreesRepository.layer,
      WorkspaceSessionsRepository.layer,
      CheckpointsRepository.layer,
      MachinesRepository.layer,
      WorkspaceMachines.layer,
      Access.layer,
      IdGenerator.layer,
      SessionAgents.layer
    ])
  )
}
