/**
 * What a worktree migration holds (docs/workspaces.md, "Migration"): its worktree while it runs,
 * by a hold recorded on the worktree's row (renewed while it runs and lapsing
 * MIGRATION_HOLD_SECONDS after the last renewal, so a server that stops mid-migration frees it by
 * itself), released by the statement that records the move; and, in the transaction recording
 * the move, the rows the move refers to, shared in the order a deletion locks them
 * (docs/workspaces.md, "A deletion during a migration").
 */
import { Context, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { NotFound, StateTransitionConflict } from "../../domain/shared/Errors.ts"
import type { AgentId } from "../../domain/shared/Ids.ts"
import { someOrFail } from "../shared/Failures.ts"
import * as Leases from "../shared/Leases.ts"
import { Transactions } from "../shared/Transactions.ts"
import { AgentsRepository } from "../runtime/AgentsRepository.ts"
import { WorkspaceSessionsRepository } from "./WorkspaceSessionsRepository.ts"
import { type StoredWorkspace, WorkspacesRepository } from "./WorkspacesRepository.ts"
import { type StoredWorktree, type WorktreeChange, WorktreesRepository } from "./WorktreesRepository.ts"

/**
 * How long a migration's hold on its worktree lasts past its last renewal; renewed every
 * MIGRATION_HOLD_RENEW_SECONDS while the migration runs. A hold left by a server that stopped
 * mid-migration lapses after this long.
 */
export const MIGRATION_HOLD_SECONDS = 60
export const MIGRATION_HOLD_RENEW_SECONDS = 15

const make = Effect.gen(function*() {
  const worktrees = yield* WorktreesRepository
  const sessions = yield* WorkspaceSessionsRepository
  const transactions = yield* Transactions
  const agentRows = yield* AgentsRepository
  const workspaceRows = yield* WorkspacesRepository

  /**
   * The migration's end: the worktree changed and its hold released in one statement (a hold
   * that lapsed meanwhile, another migration having taken the worktree, is 409).
   */
  const finish = (worktree: StoredWorktree, migrationId: string, change: WorktreeChange) =>
    worktrees.updateHeld(worktree.id, migrationId, change).pipe(
      someOrFail(() =>
        new StateTransitionConflict({
          error: `The migration of worktree ${worktree.id} lost its hold on it (it ran past its time); ` +
            "list the worktree to see where it is, and migrate again"
        })
      )
    )

  /**
   * Runs `record` (the move's rows: the worktree, a REMOTE move's session, the sandbox left) in
   * one transaction that first shares, in this order, the row of the sandbox's agent (`agentId`,
   * a REMOTE move's) and the workspace's row, as a row referring to them does: the order in which
   * a deletion of the project (its agents, then its workspaces, their worktrees) and of the
   * workspace (its row, its sandboxes, its worktrees) lock them, so that either deletion under way
   * is waited for, and one that comes after waits for the move. Recorded in the other order (the
   * worktree's row first, the session's references after), the move and a deletion each held
   * what the other waited for: deadlock detected, a 500 for one of them. The workspace or the
   * agent gone meanwhile (deleted with its workspace, or its project) is 404.
   */
  const recordMove = <A, E, R>(
    workspace: StoredWorkspace,
    worktree: StoredWorktree,
    agentId: AgentId | null,
    record: Effect.Effect<A, E, R>
  ) =>
    transactions.transaction(Effect.gen(function*() {
      const kept = (agentId === null || (yield* agentRows.keepFromDeletion(agentId))) &&
        (yield* workspaceRows.keepFromDeletion(workspace.id))
      if (!kept) {
        return yield* Effect.fail(
          new NotFound({ error: `Worktree ${worktree.id} was deleted with its workspace ${workspace.id} while it was migrated` })
        )
      }
      return yield* record
    }))

  /**
   * Runs `use` while the migration holds the worktree (its row as the hold left it); another
   * migration holding it is 409. The hold is renewed while `use` runs and released when it
   * ends, however it ends.
   */
  const holding = <A, E, R>(worktree: StoredWorktree, use: (held: StoredWorktree, migrationId: string) => Effect.Effect<A, E, R>) =>
    Effect.scoped(Effect.gen(function*() {
      const migrationId = randomUUID()
      const held = yield* Leases.held({
        what: `the migration hold on worktree ${worktree.id}`,
        take: worktrees.hold(worktree.id, migrationId, MIGRATION_HOLD_SECONDS),
        renew: worktrees.renewHold(worktree.id, migrationId, MIGRATION_HOLD_SECONDS),
        release: worktrees.releaseHold(worktree.id, migrationId),
        renewEverySeconds: MIGRATION_HOLD_RENEW_SECONDS
      })
      if (Option.isNone(held)) {
        return yield* Effect.fail(
          new StateTransitionConflict({
            error: `Worktree ${worktree.id} is being migrated by another request; wait for that migration to finish ` +
              "(list the worktree to see where it went) and migrate again if you still need to"
          })
        )
      }
      return yield* use(held.value, migrationId)
    }))

  /** While the migration holds the worktree: refused when a session's agent of it is in a turn, else `use`. */
  const held = <A, E, R>(found: StoredWorktree, use: (worktree: StoredWorktree, migrationId: string) => Effect.Effect<A, E, R>) =>
    holding(found, (worktree, migrationId) =>
      Effect.gen(function*() {
        if (yield* sessions.busy(worktree.id)) {
          return yield* Effect.fail(
            new StateTransitionConflict({
              error: `A session's agent of worktree ${worktree.id} is in a turn; wait for it to finish (or cancel it) and migrate then`
            })
          )
        }
        return yield* use(worktree, migrationId)
      }))

  return { held, finish, recordMove } as const
})

export class MigrationHolds extends Context.Service<MigrationHolds, Effect.Success<typeof make>>()("MigrationHolds") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      WorktreesRepository.layer,
      WorkspaceSessionsRepository.layer,
      Transactions.layer,
      AgentsRepository.layer,
      WorkspacesRepository.layer
    ])
  )
}
