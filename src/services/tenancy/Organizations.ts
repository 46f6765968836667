import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { NotFound } from "../../domain/shared/Errors.ts"
import { OrgId, type UserId } from "../../domain/shared/Ids.ts"
import { Organization } from "../../domain/tenancy/Organizations.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { toPage } from "../../domain/shared/Pagination.ts"
import type { Principal } from "../../domain/tenancy/Principal.ts"
import { pageRequest } from "../shared/Paging.ts"
import { firstOr } from "../shared/Sql.ts"

interface OrganizationRow {
  readonly id: OrgId
  readonly name: string
  readonly created_at: Date
}

const toOrganization = (row: OrganizationRow) => new Organization(row, { disableValidation: true })

export class Organizations extends Effect.Service<Organizations>()("Organizations", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** A new organization whose owner is `ownerId`. */
    const create = (name: string, ownerId: UserId) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<OrganizationRow>`
          INSERT INTO organizations ${sql.insert({ id: OrgId.make(), name })} RETURNING id, name, created_at`
        yield* sql`INSERT INTO org_members ${sql.insert({ org_id: rows[0].id, user_id: ownerId, role: "owner" })}`
        return toOrganization(rows[0])
      })).pipe(Effect.orDie)

    /** The organizations the caller belongs to (an organization key: its own). */
    const list = (principal: Principal, query: ListQuery) =>
      Effect.gen(function*() {
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<OrganizationRow>`
          SELECT o.id, o.name, o.created_at FROM organizations o
          WHERE ${
          principal.kind === "user"
            ? sql`o.id IN (SELECT org_id FROM org_members WHERE user_id = ${principal.userId})`
            : sql`o.id = ${principal.orgId}`
        }
          ${after === undefined ? sql`` : sql`AND o.id > ${after}`}
          ORDER BY o.id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toOrganization), limit, (org) => org.id)
      })

    const get = (orgId: OrgId) =>
      sql<OrganizationRow>`SELECT id, name, created_at FROM organizations WHERE id = ${orgId}`.pipe(
        Effect.orDie,
        Effect.flatMap(firstOr(() => new NotFound({ error: `Organization ${orgId} not found` }))),
        Effect.map(toOrganization)
      )

    const rename = (orgId: OrgId, name: string) =>
      sql<OrganizationRow>`
        UPDATE organizations SET name = ${name} WHERE id = ${orgId} RETURNING id, name, created_at`.pipe(
        Effect.orDie,
        Effect.flatMap(firstOr(() => new NotFound({ error: `Organization ${orgId} not found` }))),
        Effect.map(toOrganization)
      )

    return { create, list, get, rename } as const
  })
}) {}
