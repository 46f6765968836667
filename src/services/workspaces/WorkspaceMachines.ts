/**
 * The workspace operations sent to a machine's daemon (docs/workspaces.md, "On the machine"),
 * through MachineOperations as the files route does: a request row `ws-<random>`, its result
 * awaited (WORKSPACE_ANSWER_TIMEOUT_SECONDS). A machine without a connected daemon is refused
 * before anything is stored.
 */
import { Context, Data, Effect, Layer, Option, type Schema } from "effect"
import type { Operation } from "../../domain/machines/DaemonProtocol.ts"
import {
  CheckpointContent,
  WorktreeLocation
} from "../../domain/machines/WorkspaceOperations.ts"
import { DaemonRuntimeUnregistered, ServiceUnavailable, Unprocessable } from "../../domain/shared/Errors.ts"
import { SessionMachineOffline, SessionMachineTimeout, SessionRefused } from "../../domain/workspaces/Workspaces.ts"
import { MachineOperations } from "../machines/MachineOperations.ts"
import { isPoolMachineGone, type StoredMachine } from "../machines/StoredMachine.ts"

/** How long a workspace operation (a clone, a checkpoint) may take on the machine. */
export const WORKSPACE_ANSWER_TIMEOUT_SECONDS = 120

/** Why an operation on the machine did not give its output (a daemon's failure or an unreadable answer: refused). */
export class MachineOperationFailed extends Data.TaggedError("MachineOperationFailed")<{
  readonly kind: "offline" | "refused" | "timeout"
  readonly message: string
}> {}

/**
 * Whether a worktree's machine is gone with the worktree's files: its row removed, or a pool
 * machine being deleted or deleted (the row stays as a record).
 */
export const machineGone = (machine: Option.Option<StoredMachine>) =>
  Option.match(machine, { onNone: () => true, onSome: isPoolMachineGone })

/** The failure as the sessions route answers it (`{status: "error", payload}`). */
export const asSessionFailure = (failure: MachineOperationFailed) =>
  failure.kind === "offline"
    ? new SessionMachineOffline({ error: failure.message })
    : failure.kind === "refused"
    ? new SessionRefused({ error: failure.message })
    : new SessionMachineTimeout({ error: failure.message })

/** The failure as the migrate route answers it (the API's error body). */
export const asApiFailure = (failure: MachineOperationFailed) =>
  failure.kind === "offline"
    ? new DaemonRuntimeUnregistered({ error: failure.message })
    : failure.kind === "refused"
    ? new Unprocessable({ error: failure.message })
    : new ServiceUnavailable({ error: failure.message })

const make = Effect.gen(function*() {
  const operations = yield* MachineOperations

  const run = <A, I>(machine: StoredMachine, operation: Operation, output: Schema.Codec<A, I>) =>
    operations.run(machine, operation, output, { requestPrefix: "ws", timeoutSeconds: WORKSPACE_ANSWER_TIMEOUT_SECONDS }).pipe(
      Effect.mapError((error) =>
        new MachineOperationFailed({
          kind: error.kind === "offline" || error.kind === "timeout" ? error.kind : "refused",
          message: error.message
        })
      )
    )

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
