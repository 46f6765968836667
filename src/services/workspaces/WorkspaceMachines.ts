/**
 * The workspace operations sent to a machine's daemon (docs/workspaces.md, "On the machine"),
 * through MachineOperations as the files route does: a request row `ws-<random>`, its result
 * awaited (WORKSPACE_ANSWER_TIMEOUT_SECONDS). A machine without a connected daemon is refused
 * before anything is stored.
 */
import { Context, Effect, Layer, Option, type Schema } from "effect"
import type { Operation } from "../../domain/machines/DaemonProtocol.ts"
import {
  CheckpointContent,
  WorktreeLocation
} from "../../domain/machines/WorkspaceOperations.ts"
import { DaemonRuntimeUnregistered, ServiceUnavailable, Unprocessable } from "../../domain/shared/Errors.ts"
import type { WorkspaceId } from "../../domain/shared/Ids.ts"
import { SessionMachineOffline, SessionMachineTimeout, SessionRefused } from "../../domain/workspaces/Workspaces.ts"
import { type MachineOperationError, MachineOperations } from "../machines/MachineOperations.ts"
import { isPoolMachineGone, type StoredMachine } from "../machines/StoredMachine.ts"
import { CheckpointsRepository } from "./CheckpointsRepository.ts"

/** How long a workspace operation (a clone, a checkpoint) may take on the machine. */
export const WORKSPACE_ANSWER_TIMEOUT_SECONDS = 120

/**
 * Whether a worktree's machine is gone with the worktree's files: its row removed, or a pool
 * machine being deleted or deleted (the row stays as a record).
 */
export const machineGone = (machine: Option.Option<StoredMachine>) =>
  Option.match(machine, { onNone: () => true, onSome: isPoolMachineGone })

/**
 * The failure as the sessions route answers it (`{status: "error", payload}`): the daemon's
 * failure and an answer not understood are both a refusal.
 */
export const asSessionFailure = (failure: MachineOperationError) => {
  switch (failure.kind) {
    case "offline":
      return new SessionMachineOffline({ error: failure.message })
    case "timeout":
      return new SessionMachineTimeout({ error: failure.message })
    case "failed":
    case "unreadable":
      return new SessionRefused({ error: failure.message })
  }
}

/** The failure as the migrate route answers it (the API's error body), a refusal as for the sessions route. */
export const asApiFailure = (failure: MachineOperationError) => {
  switch (failure.kind) {
    case "offline":
      return new DaemonRuntimeUnregistered({ error: failure.message })
    case "timeout":
      return new ServiceUnavailable({ error: failure.message })
    case "failed":
    case "unreadable":
      return new Unprocessable({ error: failure.message })
  }
}

/** Where a worktree is on a machine: its workspace's repository, and its name (null: the main one). */
export interface WorktreePlace {
  readonly repository: string | null
  readonly workspace_id: WorkspaceId
  readonly name: string | null
}

const make = Effect.gen(function*() {
  const operations = yield* MachineOperations
  const checkpoints = yield* CheckpointsRepository

  const run = <A, I>(machine: StoredMachine, operation: Operation, output: Schema.Codec<A, I>) =>
    operations.run(machine, operation, output, { requestPrefix: "ws", timeoutSeconds: WORKSPACE_ANSWER_TIMEOUT_SECONDS })

  return {
    /** Makes (or finds) the worktree `name` (null: the main one) on the machine. */
    worktree: (machine: StoredMachine, place: WorktreePlace, baseRef: string | null) =>
      run(machine, { operation: "worktree.create", ...place, base_ref: baseRef }, WorktreeLocation),
    /** Packs the worktree at `path` on the machine. */
    checkpoint: (machine: StoredMachine, path: string) =>
      run(machine, { operation: "checkpoint.create", path }, CheckpointContent),
    /** Makes the worktree at `place` on the machine exactly the workspace's stored checkpoint `checkpointId`. */
    restoreCheckpoint: (machine: StoredMachine, place: WorktreePlace, checkpointId: string) =>
      Effect.gen(function*() {
        const stored = yield* checkpoints.content(place.workspace_id, checkpointId)
        if (Option.isNone(stored)) return yield* Effect.die(new Error(`checkpoint ${checkpointId} is missing`))
        const content = Buffer.from(stored.value.content).toString("base64")
        return yield* run(machine, { operation: "checkpoint.restore", ...place, content }, WorktreeLocation)
      })
  } as const
})

export class WorkspaceMachines extends Context.Service<WorkspaceMachines, Effect.Success<typeof make>>()("WorkspaceMachines") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide([MachineOperations.layer, CheckpointsRepository.layer]))
}
