/** The `workspaces` table: a person's workspaces, and the hold a session start takes on their placements. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { MachineId, MachinePoolId, OrgId, ProjectId, UserId, WorkspaceId } from "../../domain/shared/Ids.ts"
import { Timestamp } from "../../domain/shared/Timestamp.ts"
import { Workspace } from "../../domain/workspaces/Workspaces.ts"
import { lockClause, RowLock } from "../shared/Sql.ts"

const Fields = Schema.Struct({
  name: Schema.String,
  repository_url: Schema.NullOr(Schema.String),
  base_ref: Schema.NullOr(Schema.String),
  default_machine_id: Schema.NullOr(MachineId),
  machine_pool_id: Schema.NullOr(MachinePoolId),
  sync_enabled: Schema.Boolean
})
export type WorkspaceFields = typeof Fields.Type

const NewWorkspace = Schema.Struct({ ...Fields.fields, id: WorkspaceId, user_id: UserId, org_id: OrgId, project_id: ProjectId })

export const StoredWorkspace = Schema.Struct({ ...NewWorkspace.fields, created_at: Timestamp, updated_at: Timestamp })
export type StoredWorkspace = typeof StoredWorkspace.Type

export const toWorkspace = (stored: StoredWorkspace): Workspace =>
  new Workspace({
    id: stored.id,
    name: stored.name,
    org_id: stored.org_id,
    project_id: stored.project_id,
    repository: { url: stored.repository_url, base_ref: stored.base_ref },
    default_machine_id: stored.default_machine_id,
    machine_pool_id: stored.machine_pool_id,
    sync_enabled: stored.sync_enabled,
    created_at: stored.created_at,
    updated_at: stored.updated_at
  })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.findOne({
    Request: NewWorkspace,
    Result: StoredWorkspace,
    execute: (workspace) => sql`INSERT INTO workspaces ${sql.insert(workspace)} RETURNING *`
  })

  const find = SqlSchema.findOneOption({
    Request: Schema.Struct({ userId: UserId, id: WorkspaceId, lock: RowLock }),
    Result: StoredWorkspace,
    execute: ({ id, lock, userId }) =>
      sql`SELECT * FROM workspaces WHERE id = ${id} AND user_id = ${userId} ${lockClause(sql, lock)}`
  })

  const list = SqlSchema.findAll({
    Request: UserId,
    Result: StoredWorkspace,
    execute: (userId) => sql`SELECT * FROM workspaces WHERE user_id = ${userId} ORDER BY id`
  })

  const count = SqlSchema.findOne({
    Request: UserId,
    Result: Schema.Struct({ count: Schema.Number }),
    execute: (userId) => sql`SELECT count(*)::int AS count FROM workspaces WHERE user_id = ${userId}`
  })

  const update = SqlSchema.findOne({
    Request: Schema.Struct({ id: WorkspaceId, fields: Fields }),
    Result: StoredWorkspace,
    execute: ({ fields, id }) =>
      sql`UPDATE workspaces SET ${sql.update(fields)}, updated_at = now() WHERE id = ${id} RETURNING *`
  })

  const keepFromDeletion = SqlSchema.findOneOption({
    Request: WorkspaceId,
    Result: Schema.Struct({ id: WorkspaceId }),
    execute: (id) => sql`SELECT id FROM workspaces WHERE id = ${id} FOR KEY SHARE`
  })

  const remove = SqlSchema.void({
    Request: WorkspaceId,
    execute: (id) => sql`DELETE FROM workspaces WHERE id = ${id}`
  })

  const Hold = Schema.Struct({ id: WorkspaceId, holder: Schema.String, seconds: Schema.Number })

  const holdPlacement = SqlSchema.findOneOption({
    Request: Hold,
    Result: Schema.Struct({ id: WorkspaceId }),
    execute: ({ holder, id, seconds }) => sql`
      UPDATE workspaces SET placement_id = ${holder}, placement_held_until = now() + make_interval(secs => ${seconds})
      WHERE id = ${id} AND (placement_held_until IS NULL OR placement_held_until <= now()) RETURNING id`
  })

  const renewPlacement = SqlSchema.void({
    Request: Hold,
    execute: ({ holder, id, seconds }) => sql`
      UPDATE workspaces SET placement_held_until = now() + make_interval(secs => ${seconds})
      WHERE id = ${id} AND placement_id = ${holder}`
  })

  const releasePlacement = SqlSchema.void({
    Request: Schema.Struct({ id: WorkspaceId, holder: Schema.String }),
    execute: ({ holder, id }) => sql`
      UPDATE workspaces SET placement_id = NULL, placement_held_until = NULL WHERE id = ${id} AND placement_id = ${holder}`
  })

  const exists = SqlSchema.findOneOption({
    Request: WorkspaceId,
    Result: Schema.Struct({ id: WorkspaceId }),
    execute: (id) => sql`SELECT id FROM workspaces WHERE id = ${id}`
  })

  return {
    insert: (workspace: typeof NewWorkspace.Type) => Effect.orDie(insert(workspace)),
    /** The user's workspace; another user's is none. */
    find: (userId: UserId, id: WorkspaceId, lock: RowLock = "none") => Effect.orDie(find({ userId, id, lock })),
    list: (userId: UserId) => Effect.orDie(list(userId)),
    /** How many workspaces the user has. */
    count: (userId: UserId) => Effect.map(Effect.orDie(count(userId)), (row) => row.count),
    update: (id: WorkspaceId, fields: WorkspaceFields) => Effect.orDie(update({ id, fields })),
    remove: (id: WorkspaceId) => Effect.orDie(remove(id)),
    /**
     * The workspace's row shared until the transaction ends as a row referring to it shares it
     * (FOR KEY SHARE): a deletion (the workspace's, or its project's) waits for the transaction,
     * and the transaction taking this first waits for a deletion under way. Whether the
     * workspace is there.
     */
    keepFromDeletion: (id: WorkspaceId) => Effect.map(Effect.orDie(keepFromDeletion(id)), Option.isSome),
    /** Whether the workspace is still there. */
    exists: (id: WorkspaceId) => Effect.map(Effect.orDie(exists(id)), Option.isSome),
    /**
     * Holds the workspace's placements for `seconds` for the session start `holder`
     * (docs/workspaces.md, "Sessions started at once"); none when another holds them now (or the
     * workspace is gone). The workspace's `updated_at` is not changed.
     */
    holdPlacement: (id: WorkspaceId, holder: string, seconds: number) => Effect.orDie(holdPlacement({ id, holder, seconds })),
    /** The hold for `seconds` more from now (nothing when it is no longer the holder's). */
    renewPlacement: (id: WorkspaceId, holder: string, seconds: number) => Effect.orDie(renewPlacement({ id, holder, seconds })),
    /** Ends the hold (nothing when it is no longer the holder's). */
    releasePlacement: (id: WorkspaceId, holder: string) => Effect.orDie(releasePlacement({ id, holder }))
  } as const
})

export class WorkspacesRepository extends Context.Service<WorkspacesRepository, Effect.Success<typeof make>>()("WorkspacesRepository") {
  static readonly layer = Layer.effect(this, make)
}
