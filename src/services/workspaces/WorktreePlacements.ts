/**
 * The placement of a session's worktree on its machine (docs/workspaces.md): the worktree made (or
 * found) there through the machine's daemon, or a checkpoint waiting for a restore there restored
 * first, and its row recorded.
 *
 * A session start places its worktree while it holds its workspace's placements (a hold recorded
 * on the workspace's row, so across server processes; renewed while it places, lapsing
 * PLACEMENT_HOLD_SECONDS after the last renewal): session starts of one workspace at once place
 * one after the other, each the worktree as the one before left it (made once, then reused).
 */
import { Clock, Context, Effect, Layer, Option, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { Conflict, NotFound, StateTransitionConflict } from "../../domain/shared/Errors.ts"
import { UserMachinePathId, WorktreeId } from "../../domain/shared/Ids.ts"
import { SessionMachineTimeout } from "../../domain/workspaces/Workspaces.ts"
import type { StoredMachine } from "../machines/StoredMachine.ts"
import { IdGenerator } from "../shared/Ids.ts"
import * as Leases from "../shared/Leases.ts"
import { asSessionFailure, WORKSPACE_ANSWER_TIMEOUT_SECONDS, WorkspaceMachines } from "./WorkspaceMachines.ts"
import { type StoredWorkspace, WorkspacesRepository } from "./WorkspacesRepository.ts"
import { migrating, type StoredWorktree, WorktreesRepository } from "./WorktreesRepository.ts"

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

/**
 * The machine a worktree lives on: a REMOTE one's sandbox; a LOCAL one's machine once it is
 * placed there or waits for a restore there; null when it is on no machine yet.
 */
export const machineOf = (row: StoredWorktree) =>
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
export const requireNotMigrating = (row: StoredWorktree) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => migrating(row, now) ? Effect.fail(beingMigrated(row)) : Effect.void)

const make = Effect.gen(function*() {
  const workspaceRows = yield* WorkspacesRepository
  const worktrees = yield* WorktreesRepository
  const onMachine = yield* WorkspaceMachines
  const ids = yield* IdGenerator

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

  return { placeWorktree } as const
})

export class WorktreePlacements extends Context.Service<WorktreePlacements, Effect.Success<typeof make>>()("WorktreePlacements") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      WorkspacesRepository.layer,
      WorktreesRepository.layer,
      WorkspaceMachines.layer,
      IdGenerator.layer
    ])
  )
}
