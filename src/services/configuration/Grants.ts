/**
 * Grants share a resource (a secret, a model, a skill) with another project of its organization.
 * Each resource keeps its grants in a table of the same shape (`id, org_id, <resource>_id,
 * target_project_id, created_at`); `grantStore` gives the storage of one such table. Who may
 * grant stays with each resource's service.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Conflict, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import type { OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { type ListQuery, type PageOf, toPage } from "../../domain/shared/Pagination.ts"
import { pageRequest } from "../shared/Paging.ts"
import { firstOr, onDuplicate } from "../shared/Sql.ts"

/** A grant's target must be a project of the same organization; anything else is `invalid_request`. */
export const requireGrantTarget = (sql: SqlClient.SqlClient, orgId: OrgId, projectId: ProjectId) =>
  Effect.flatMap(
    sql<{ id: ProjectId }>`SELECT id FROM projects WHERE id = ${projectId} AND org_id = ${orgId}`.pipe(Effect.orDie),
    firstOr(() =>
      new InvalidRequest({
        error: `Project ${projectId} is not a project of organization ${orgId}; grant to one of its projects`,
        issues: [{ path: "/target_project_id", message: "no such project in this organization" }]
      })
    )
  )

export interface GrantTable<Row, Grant, GrantId extends string> {
  readonly table: string
  /** The column naming the shared resource, e.g. `secret_id`. */
  readonly resourceColumn: string
  /** What the resource is called in messages, e.g. `Secret`. */
  readonly resourceLabel: string
  readonly newId: () => GrantId
  /** The grant of a row of the table (`SELECT *`). */
  readonly toGrant: (row: Row) => Grant
}

export const grantStore = <Row extends object, Grant extends { readonly id: string }, GrantId extends string>(
  sql: SqlClient.SqlClient,
  spec: GrantTable<Row, Grant, GrantId>
) => {
  const table = sql(spec.table)
  const resourceColumn = sql(spec.resourceColumn)

  const create = (
    orgId: OrgId,
    resourceId: string,
    targetProjectId: ProjectId
  ): Effect.Effect<Grant, InvalidRequest | Conflict> =>
    Effect.gen(function*() {
      yield* requireGrantTarget(sql, orgId, targetProjectId)
      const rows = yield* sql<Row>`
        INSERT INTO ${table} ${
        sql.insert({
          id: spec.newId(),
          org_id: orgId,
          [spec.resourceColumn]: resourceId,
          target_project_id: targetProjectId
        })
      } RETURNING *`.pipe(
        onDuplicate(() =>
          new Conflict({ error: `${spec.resourceLabel} ${resourceId} is granted to project ${targetProjectId} already` })
        )
      )
      return spec.toGrant(rows[0])
    })

  const list = (resourceId: string, query: ListQuery): Effect.Effect<PageOf<Grant>, InvalidRequest> =>
    Effect.gen(function*() {
      const { after, limit } = yield* pageRequest(query)
      const rows = yield* sql<Row>`
        SELECT * FROM ${table}
        WHERE ${resourceColumn} = ${resourceId} ${after === undefined ? sql`` : sql`AND id > ${after}`}
        ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
      return toPage(rows.map(spec.toGrant), limit, (grant) => grant.id)
    })

  const remove = (resourceId: string, grantId: GrantId): Effect.Effect<void, NotFound> =>
    sql`DELETE FROM ${table} WHERE id = ${grantId} AND ${resourceColumn} = ${resourceId} RETURNING id`.pipe(
      Effect.orDie,
      Effect.flatMap(firstOr(() =>
        new NotFound({ error: `Grant ${grantId} of ${spec.resourceLabel.toLowerCase()} ${resourceId} not found` })
      )),
      Effect.asVoid
    )

  return { create, list, remove } as const
}
