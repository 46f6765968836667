/**
 * The grant tables (`secret_grants`, `model_grants`, `skill_grants`, ...): one shape, `id,
 * org_id, <resource>_id, target_project_id, created_at`. `grantsRepository` makes the repository
 * of one such table; each grantable resource has its own (SecretGrantsRepository.ts, ...), the
 * only code that names its table.
 */
import { SqlClient, SqlSchema } from "effect/sql"
import { Effect, Option, Schema } from "effect"
import type { IdSchema } from "../../domain/shared/Ids.ts"
import { OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { uniqueOrDie } from "../shared/Sql.ts"

export interface GrantTable<ResourceId extends string, GrantId extends string, Grant, GrantEncoded> {
  readonly table: string
  /** The column naming the shared resource, e.g. `secret_id`. */
  readonly resourceColumn: string
  readonly resourceId: Schema.Codec<ResourceId, string>
  readonly grantId: IdSchema<GrantId>
  readonly grant: Schema.Codec<Grant, GrantEncoded>
  /** What the resource is called in messages, e.g. `Secret`. */
  readonly label: string
}

export interface NewGrant<ResourceId extends string, GrantId extends string> {
  readonly id: GrantId
  readonly org_id: OrgId
  readonly resource_id: ResourceId
  readonly target_project_id: ProjectId
}

export const grantsRepository = <ResourceId extends string, GrantId extends string, Grant, GrantEncoded>(
  spec: GrantTable<ResourceId, GrantId, Grant, GrantEncoded>
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const table = sql(spec.table)
    const resourceColumn = sql(spec.resourceColumn)

    const insert = SqlSchema.findOne({
      Request: Schema.Struct({ id: spec.grantId, org_id: OrgId, resource_id: spec.resourceId, target_project_id: ProjectId }),
      Result: spec.grant,
      execute: ({ resource_id, ...grant }) =>
        sql`INSERT INTO ${table} ${sql.insert({ ...grant, [spec.resourceColumn]: resource_id })} RETURNING *`
    })

    const page = keysetQuery(sql, {
      filter: spec.resourceId,
      result: spec.grant,
      select: (resourceId) => sql`SELECT * FROM ${table} WHERE ${resourceColumn} = ${resourceId}`
    })

    const remove = SqlSchema.findOneOption({
      Request: Schema.Struct({ resourceId: spec.resourceId, grantId: spec.grantId }),
      Result: Schema.Struct({ id: spec.grantId }),
      execute: ({ grantId, resourceId }) =>
        sql`DELETE FROM ${table} WHERE id = ${grantId} AND ${resourceColumn} = ${resourceId} RETURNING id`
    })

    const grantedAmong = SqlSchema.findAll({
      Request: Schema.Struct({ projectId: ProjectId, resourceIds: Schema.Array(spec.resourceId) }),
      Result: Schema.Struct({ resource_id: spec.resourceId }),
      execute: ({ projectId, resourceIds }) =>
        resourceIds.length === 0 ? Effect.succeed([]) : sql`
          SELECT ${resourceColumn} AS resource_id FROM ${table}
          WHERE target_project_id = ${projectId} AND ${sql.in(spec.resourceColumn, resourceIds)}`
    })

    return {
      label: spec.label,
      grantId: spec.grantId,
      /** Fails with UniqueViolation when the resource is granted to the project already. */
      insert: (grant: NewGrant<ResourceId, GrantId>) => uniqueOrDie(insert(grant)),
      page: (resourceId: ResourceId, keyset: Keyset) => page(resourceId, keyset),
      /** Whether there was such a grant to remove. */
      remove: (resourceId: ResourceId, grantId: GrantId) =>
        Effect.map(Effect.orDie(remove({ resourceId, grantId })), Option.isSome),
      /** Which of `resourceIds` are granted to the project. */
      grantedAmong: (projectId: ProjectId, resourceIds: ReadonlyArray<ResourceId>) =>
        Effect.map(
          Effect.orDie(grantedAmong({ projectId, resourceIds })),
          (rows) => new Set<ResourceId>(rows.map((row) => row.resource_id))
        )
    } as const
  })

/** The repository of one grant table. */
export type GrantsRepository<ResourceId extends string, GrantId extends string, Grant> = Effect.Success<
  ReturnType<typeof grantsRepository<ResourceId, GrantId, Grant, unknown>>
>
