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
import { SessionMachineOffline, SessionMachineTimeout, SessionRefused } from "../../domain/workspaces/Workspaces.ts"
import { type MachineOperationError, MachineOperations } from "../machines/MachineOperations.ts"
import { isPoolMachineGone, type StoredMachine } from "../machines/StoredMachine.ts"

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

const make = Effect.gen(function*() {
  const operations = yield* MachineOperations

  const run = <A, I>(machine: StoredMachine, operation: Operation, output: Schema.Codec<A, I>) =>
    operations.run(machine, operation, output, { requestPrefix: "ws", timeoutSeconds: WORKSPACE_ANSWER_TIMEOUT_SECONDS })

  return {
    /** Makes (or finds) the worktree `name` (null: the main one) on the machine. */
    worktree: (
      machine: StoredMachine,
      place: { readonly repository: string | null; readonly workspace_id: string; readonly name: string | null },
      baseRef: string | null
    ) => run(machine, { operation: "worktree.create", ...place, base_ref: baseRef }, WorktreeLocation),
    /** Packs the worktree at `path` on the machine. */
    checkpoint: (machine: StoredMachine, path: string) =>
      run(machine, { operation: "checkpoint.create", path }, CheckpointContent),
    /** Makes the worktree `name` on the machine exactly the checkpoint (its bytes, base64). */
    restore: (
      machine: StoredMachine,
      place: { readonly repository: string | null; readonly workspace_id: string; readonly name: string | null },
      content: string
    ) => run(machine, { operation: "checkpoint.restore", ...place, content }, WorktreeLocation)
  } as const
})

export class WorkspaceMachines extends Context.Service<WorkspaceMachines, Effect.Success<typeof make>>()("WorkspaceMachines") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(MachineOperations.layer))
}
