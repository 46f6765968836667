/**
 * The checkpoints a worktree migration moves a worktree with (docs/workspaces.md, "Migration"):
 * the worktree packed by its machine's daemon (`checkpoint.create`) and stored by its `sha256:`
 * digest, made the worktree's current checkpoint; or, when the worktree is on no machine, why
 * there is nothing to move.
 */
import { Context, Effect, Layer, Option } from "effect"
import { Conflict, DaemonRuntimeUnregistered } from "../../domain/shared/Errors.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import type { StoredMachine } from "../machines/StoredMachine.ts"
import { sha256 } from "../shared/Hash.ts"
import { CheckpointsRepository } from "./CheckpointsRepository.ts"
import { asApiFailure, machineGone, WorkspaceMachines } from "./WorkspaceMachines.ts"
import type { StoredWorkspace } from "./WorkspacesRepository.ts"
import type { StoredWorktree, WorktreeChange } from "./WorktreesRepository.ts"

/** A checkpoint made and stored now, and the machine it was packed on. */
export interface Packed {
  readonly id: string
  readonly metadata: Record<string, unknown>
  readonly machine: StoredMachine
}

/** The machine the checkpoint just made was packed on, if one was made. */
export const packedOn = (packed: Option.Option<Packed>) => Option.map(packed, (made) => made.machine)

/** The checkpoint columns of a worktree that `packed` is the current checkpoint of. */
export const currentCheckpoint = (packed: Packed): WorktreeChange => ({
  current_checkpoint_id: packed.id,
  last_synced_checkpoint_id: packed.id,
  checkpoint_metadata: packed.metadata
})

/** No checkpoint to move the worktree with: why, and what to do. */
export const noCheckpoint = (worktree: StoredWorktree) =>
  Effect.gen(function*() {
    const sandbox = worktree.worktree_type === "REMOTE" && worktree.managed_machine_id !== null
      ? worktree.managed_machine_id
      : null
    return yield* Effect.fail(
      new Conflict({
        error: sandbox === null
          ? `Worktree ${worktree.id} has no checkpoint and is on no machine yet: start a session on it first`
          : `Worktree ${worktree.id} has no checkpoint (it was made fresh from the base ref and could not be packed ` +
            `then), and its sandbox (machine ${sandbox}) was deleted with its files: there is nothing to move. ` +
            "Migrate it to REMOTE with source base_ref to start it afresh, or start a session with another worktree_name"
      })
    )
  })

/** A pool machine offline: its daemon cannot be started by the user, only come back or the machine be deleted. */
const sandboxOffline = (workspace: StoredWorkspace, worktree: StoredWorktree, machine: StoredMachine) =>
  new DaemonRuntimeUnregistered({
    error: `The sandbox of worktree ${worktree.id} (machine ${machine.id} of pool ${machine.machine_pool_id}) is ` +
      "offline, so its work cannot be packed into a checkpoint. Migrate again once its daemon is back; or, to give " +
      "up its work since the worktree's last checkpoint, have an administrator of the organization delete the " +
      `machine (DELETE /api/v1/orgs/${workspace.org_id}/machines/${machine.id}) and migrate again: the last ` +
      "checkpoint is used then"
  })

const make = Effect.gen(function*() {
  const checkpoints = yield* CheckpointsRepository
  const machines = yield* MachinesRepository
  const onMachine = yield* WorkspaceMachines

  /** The worktree at `path` on the machine packed by its daemon (`checkpoint.create`) and stored. */
  const packOn = (workspace: StoredWorkspace, machine: StoredMachine, path: string) =>
    Effect.gen(function*() {
      const packed = yield* onMachine.checkpoint(machine, path)
      const bytes = Buffer.from(packed.content, "base64")
      const id = sha256(bytes)
      const metadata = {
        format: packed.manifest.format,
        branch: packed.manifest.branch,
        commit: packed.manifest.head,
        uncommitted_changes: packed.manifest.stash !== null,
        untracked_files: packed.manifest.untracked_files.length,
        size: bytes.byteLength,
        source_machine_id: machine.id
      }
      yield* checkpoints.store(workspace.id, id, bytes, metadata)
      return { id, metadata, machine } satisfies Packed
    })

  /**
   * A checkpoint of the worktree as it is now, made by its machine's daemon and stored; none
   * when the worktree is on no machine (no path yet, or its machine deleted: the worktree's last
   * stored checkpoint is all there is). The source machine offline is 409.
   */
  const takeCheckpoint = (workspace: StoredWorkspace, worktree: StoredWorktree) =>
    Effect.gen(function*() {
      const sourceId = worktree.worktree_type === "REMOTE" ? worktree.managed_machine_id : worktree.machine_id
      if (worktree.path === null || sourceId === null) return Option.none<Packed>()
      const source = yield* machines.findById(sourceId)
      if (Option.isNone(source) || machineGone(source)) return Option.none<Packed>()
      return Option.some(
        yield* packOn(workspace, source.value, worktree.path).pipe(
          Effect.mapError((failure) =>
            failure.kind === "offline" && source.value.machine_pool_id !== null
              ? sandboxOffline(workspace, worktree, source.value)
              : asApiFailure(failure)
          )
        )
      )
    })

  return { packOn, takeCheckpoint } as const
})

export class WorktreeCheckpoints extends Context.Service<WorktreeCheckpoints, Effect.Success<typeof make>>()("WorktreeCheckpoints") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      CheckpointsRepository.layer,
      MachinesRepository.layer,
      WorkspaceMachines.layer
    ])
  )
}
