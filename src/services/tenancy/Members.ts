/**
 * Organization membership. Admins and owners manage members; only an owner can remove or
 * demote an owner; the last owner can neither leave nor be demoted. Any member may leave.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import type { OrgId, UserId } from "../../domain/shared/Ids.ts"
import { type AssignableRole, Member, ORG_ROLE_RANK, type OrgRole } from "../../domain/tenancy/Organizations.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { toPage } from "../../domain/shared/Pagination.ts"
import { CurrentPrincipal } from "../../domain/tenancy/Principal.ts"
import { Access } from "./Access.ts"
import { MemberRemovalGuards } from "./MemberRemovalGuards.ts"
import { pageRequest } from "../shared/Paging.ts"
import { firstOr } from "../shared/Sql.ts"

interface MemberRow {
  readonly org_id: OrgId
  readonly user_id: UserId
  readonly email: string
  readonly role: OrgRole
  readonly created_at: Date
}

const toMember = (row: MemberRow) => new Member(row, { disableValidation: true })

export class Members extends Effect.Service<Members>()("Members", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access
    const guards = yield* MemberRemovalGuards

    const list = (orgId: OrgId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* access.orgRole(orgId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<MemberRow>`
          SELECT m.org_id, m.user_id, u.email, m.role, m.created_at
          FROM org_members m JOIN users u ON u.id = m.user_id
          WHERE m.org_id = ${orgId} ${after === undefined ? sql`` : sql`AND m.user_id > ${after}`}
          ORDER BY m.user_id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toMember), limit, (member) => member.user_id)
      })

    /** The member row, locked for the rest of the transaction, with the organization's owner count. */
    const lockTarget = (orgId: OrgId, userId: UserId) =>
      Effect.gen(function*() {
        const owners = yield* sql<{ user_id: UserId }>`
          SELECT user_id FROM org_members WHERE org_id = ${orgId} AND role = 'owner' FOR UPDATE`
        const target = yield* sql<MemberRow>`
          SELECT m.org_id, m.user_id, u.email, m.role, m.created_at
          FROM org_members m JOIN users u ON u.id = m.user_id
          WHERE m.org_id = ${orgId} AND m.user_id = ${userId} FOR UPDATE OF m`.pipe(
          Effect.flatMap(firstOr(() => new NotFound({ error: `User ${userId} is not a member of ${orgId}` })))
        )
        return { target, ownerCount: owners.length }
      })

    const requireOwnerToChangeOwner = (callerRole: OrgRole, target: MemberRow, action: string) =>
      target.role === "owner" && callerRole !== "owner"
        ? Effect.fail(new Forbidden({ error: `Only an owner can ${action} an owner` }))
        : Effect.void

    const refuseLastOwner = (target: MemberRow, ownerCount: number, action: string) =>
      target.role === "owner" && ownerCount <= 1
        ? Effect.fail(
          new Conflict({ error: `${target.user_id} is the last owner of ${target.org_id}; make another owner before you ${action} them` })
        )
        : Effect.void

    const updateRole = (orgId: OrgId, userId: UserId, role: AssignableRole) =>
      Effect.gen(function*() {
        const callerRole = yield* access.requireOrgRole(orgId, "admin")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const { ownerCount, target } = yield* lockTarget(orgId, userId)
          yield* requireOwnerToChangeOwner(callerRole, target, "demote")
          yield* refuseLastOwner(target, ownerCount, "demote")
          const rows = yield* sql<{ role: OrgRole }>`
            UPDATE org_members SET role = ${role} WHERE org_id = ${orgId} AND user_id = ${userId} RETURNING role`
          return toMember({ ...target, role: rows[0].role })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

    const remove = (orgId: OrgId, userId: UserId) =>
      Effect.gen(function*() {
        const callerRole = yield* access.orgRole(orgId)
        const principal = yield* CurrentPrincipal
        const leaving = principal.kind === "user" && principal.userId === userId
        if (!leaving && ORG_ROLE_RANK[callerRole] < ORG_ROLE_RANK.admin) {
          return yield* Effect.fail(new Forbidden({ error: "Only admins and owners can remove other members" }))
        }
        yield* sql.withTransaction(Effect.gen(function*() {
          const { ownerCount, target } = yield* lockTarget(orgId, userId)
          yield* requireOwnerToChangeOwner(callerRole, target, "remove")
          yield* refuseLastOwner(target, ownerCount, "remove")
          const blockers = yield* guards.blockers(orgId, userId)
          if (blockers.length > 0) {
            return yield* Effect.fail(
              new Conflict({ error: `${userId} cannot be removed from ${orgId}: ${blockers.join("; ")}` })
            )
          }
          yield* sql`
            DELETE FROM project_members
            WHERE user_id = ${userId} AND project_id IN (SELECT id FROM projects WHERE org_id = ${orgId})`
          yield* sql`DELETE FROM org_members WHERE org_id = ${orgId} AND user_id = ${userId}`
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

    return { list, updateRole, remove } as const
  })
}) {}
