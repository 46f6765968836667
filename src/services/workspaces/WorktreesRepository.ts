/** The `worktrees` table: the worktrees of workspaces, the main one made with its workspace. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema, Struct } from "effect"
import { MachineId, UserMachinePathId, WorkspaceId, WorktreeId } from "../../domain/shared/Ids.ts"
import { Timestamp } from "../../domain/shared/Timestamp.ts"
import { WorktreeDescriptor } from "../../domain/workspaces/Workspaces.ts"
import { uniqueOrDie } from "../shared/Sql.ts"

/**
 * A worktree as stored: its descriptor's columns (the LOCAL `user_machine_path` kept as its id and
 * machine), and the migration holding it.
 */
export const StoredWorktree = Schema.Struct({
  ...Struct.omit(WorktreeDescriptor.fields, ["user_machine_path"]),
  user_machine_path_id: Schema.NullOr(UserMachinePathId),
  machine_id: Schema.NullOr(MachineId),
  /** The migration holding the worktree (docs/workspaces.md, "Migration"), until `migration_held_until`. */
  migration_id: Schema.NullOr(Schema.String),
  migration_held_until: Schema.NullOr(Timestamp)
})
export type StoredWorktree = typeof StoredWorktree.Type

/** The columns a change may set. */
export type WorktreeChange = Partial<
  Omit<StoredWorktree, "id" | "workspace_id" | "is_main" | "created_at" | "updated_at" | "migration_id" | "migration_held_until">
>

/** Whether a migration holds the worktree at `nowMillis` (a hold past its time has lapsed). */
export const migrating = (stored: StoredWorktree, nowMillis: number) =>
  stored.migration_held_until !== null && stored.migration_held_until.getTime() > nowMillis

export const toDescriptor = (stored: StoredWorktree): WorktreeDescriptor => {
  const { machine_id, migration_held_until: _heldUntil, migration_id: _migrationId, user_machine_path_id, ...columns } = stored
  return new WorktreeDescriptor({
    ...columns,
    ...(stored.worktree_type === "LOCAL" && machine_id !== null && user_machine_path_id !== null
      ? { user_machine_path: { id: user_machine_path_id, machine_id, local_path: stored.path } }
      : {})
  })
}

const NewWorktree = Schema.Struct(
  Struct.pick(StoredWorktree.fields, ["id", "workspace_id", "is_main", "name", "worktree_type", "user_machine_path_id", "machine_id"])
)
export type NewWorktree = typeof NewWorktree.Type

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.findOne({
    Request: NewWorktree,
    Result: StoredWorktree,
    execute: (worktree) => sql`INSERT INTO worktrees ${sql.insert(worktree)} RETURNING *`
  })

  const ofWorkspace = SqlSchema.findAll({
    Request: WorkspaceId,
    Result: Schema.Struct({ ...StoredWorktree.fields, managed_machine_seen_at: Schema.NullOr(Timestamp) }),
    execute: (workspaceId) => sql`
      SELECT worktrees.*, machines.last_seen_at AS managed_machine_seen_at FROM worktrees
      LEFT JOIN machines ON machines.id = worktrees.managed_machine_id
      WHERE worktrees.workspace_id = ${workspaceId} ORDER BY worktrees.is_main DESC, worktrees.id`
  })

  const find = SqlSchema.findOneOption({
    Request: WorktreeId,
    Result: StoredWorktree,
    execute: (id) => sql`SELECT * FROM worktrees WHERE id = ${id}`
  })

  const named = SqlSchema.findOneOption({
    Request: Schema.Struct({ workspaceId: WorkspaceId, name: Schema.NullOr(Schema.String) }),
    Result: StoredWorktree,
    execute: ({ name, workspaceId }) =>
      name === null
        ? sql`SELECT * FROM worktrees WHERE workspace_id = ${workspaceId} AND is_main FOR UPDATE`
        : sql`SELECT * FROM worktrees WHERE workspace_id = ${workspaceId} AND name = ${name} FOR UPDATE`
  })

  const columnsOf = (change: WorktreeChange) => {
    const { checkpoint_metadata, ...rest } = change
    const columns: Record<string, unknown> = { ...rest }
    if (checkpoint_metadata !== undefined) columns.checkpoint_metadata = JSON.stringify(checkpoint_metadata)
    return columns
  }

  const Change = Schema.Struct({ id: WorktreeId, columns: Schema.Record(Schema.String, Schema.Unknown) })

  const update = SqlSchema.findOne({
    Request: Change,
    Result: StoredWorktree,
    execute: ({ columns, id }) => sql`UPDATE worktrees SET ${sql.update(columns)}, updated_at = now() WHERE id = ${id} RETURNING *`
  })

  /** The change, made only while no migration holds the worktree. */
  const updateUnheld = SqlSchema.findOneOption({
    Request: Change,
    Result: StoredWorktree,
    execute: ({ columns, id }) => sql`
      UPDATE worktrees SET ${sql.update(columns)}, updated_at = now()
      WHERE id = ${id} AND (migration_held_until IS NULL OR migration_held_until <= now()) RETURNING *`
  })

  /** The change, made only while the migration `migrationId` holds the worktree; the hold is released with it. */
  const updateHeld = SqlSchema.findOneOption({
    Request: Schema.Struct({ ...Change.fields, migrationId: Schema.String }),
    Result: StoredWorktree,
    execute: ({ columns, id, migrationId }) => sql`
      UPDATE worktrees SET ${sql.update(columns)}, migration_id = NULL, migration_held_until = NULL, updated_at = now()
      WHERE id = ${id} AND migration_id = ${migrationId} AND migration_held_until > now() RETURNING *`
  })

  const Hold = Schema.Struct({ id: WorktreeId, migrationId: Schema.String, seconds: Schema.Number })

  /** The worktree held for the migration, unless another migration holds it now. */
  const hold = SqlSchema.findOneOption({
    Request: Hold,
    Result: StoredWorktree,
    execute: ({ id, migrationId, seconds }) => sql`
      UPDATE worktrees SET migration_id = ${migrationId}, migration_held_until = now() + make_interval(secs => ${seconds})
      WHERE id = ${id} AND (migration_held_until IS NULL OR migration_held_until <= now()) RETURNING *`
  })

  const renew = SqlSchema.void({
    Request: Hold,
    execute: ({ id, migrationId, seconds }) => sql`
      UPDATE worktrees SET migration_held_until = now() + make_interval(secs => ${seconds})
      WHERE id = ${id} AND migration_id = ${migrationId}`
  })

  const removeUnplaced = SqlSchema.void({
    Request: WorktreeId,
    execute: (id) => sql`DELETE FROM worktrees WHERE id = ${id} AND NOT is_main AND worktree_type IS NULL`
  })

  const release = SqlSchema.void({
    Request: Schema.Struct({ id: WorktreeId, migrationId: Schema.String }),
    execute: ({ id, migrationId }) => sql`
      UPDATE worktrees SET migration_id = NULL, migration_held_until = NULL WHERE id = ${id} AND migration_id = ${migrationId}`
  })

  return {
    /** Fails with UniqueViolation when the workspace has a worktree of that name (or a main one) already. */
    insert: (worktree: NewWorktree) => uniqueOrDie(insert(worktree)),
    /**
     * The workspace's worktrees, main first; a REMOTE worktree's `last_heartbeat_at` is the last
     * sign of life of its sandbox's daemon (when later than the one stored at its placing).
     */
    ofWorkspace: (workspaceId: WorkspaceId) =>
      Effect.map(Effect.orDie(ofWorkspace(workspaceId)), (rows) =>
        rows.map(({ managed_machine_seen_at, ...stored }): StoredWorktree =>
          stored.worktree_type === "REMOTE" && managed_machine_seen_at !== null &&
            (stored.last_heartbeat_at === null || managed_machine_seen_at > stored.last_heartbeat_at)
            ? { ...stored, last_heartbeat_at: managed_machine_seen_at }
            : stored
        )),
    find: (id: WorktreeId) => Effect.orDie(find(id)),
    /** The worktree of that name (null: the main one), locked for update. */
    named: (workspaceId: WorkspaceId, name: string | null) => Effect.orDie(named({ workspaceId, name })),
    /** The change (the worktree is there: a defect otherwise). */
    update: (id: WorktreeId, change: WorktreeChange) => Effect.orDie(update({ id, columns: columnsOf(change) })),
    /** The change, made unless a migration holds the worktree (none: it does). */
    updateUnheld: (id: WorktreeId, change: WorktreeChange) => Effect.orDie(updateUnheld({ id, columns: columnsOf(change) })),
    /**
     * The change that ends the migration `migrationId`, its hold released in the same statement;
     * none when the hold lapsed (or was never this migration's).
     */
    updateHeld: (id: WorktreeId, migrationId: string, change: WorktreeChange) =>
      Effect.orDie(updateHeld({ id, migrationId, columns: columnsOf(change) })),
    /** Holds the worktree for `seconds` for the migration; none when another migration holds it. */
    hold: (id: WorktreeId, migrationId: string, seconds: number) => Effect.orDie(hold({ id, migrationId, seconds })),
    /** The migration's hold for `seconds` more from now (nothing when it is no longer the migration's). */
    renewHold: (id: WorktreeId, migrationId: string, seconds: number) => Effect.orDie(renew({ id, migrationId, seconds })),
    /** Ends the migration's hold (nothing when it is no longer the migration's). */
    releaseHold: (id: WorktreeId, migrationId: string) => Effect.orDie(release({ id, migrationId })),
    /** Deletes a worktree made but never placed on a machine (a fresh one whose making failed); others stay. */
    removeUnplaced: (id: WorktreeId) => Effect.orDie(removeUnplaced(id))
  } as const
})

export class WorktreesRepository extends Context.Service<WorktreesRepository, Effect.Success<typeof make>>()("WorktreesRepository") {
  static readonly layer = Layer.effect(this, make)
}
