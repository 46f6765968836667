/**
 * Organization invitations: an admin invites an e-mail address with a role (only an owner may
 * invite an owner); the user with that e-mail accepts and becomes a member. One pending
 * invitation per address and organization.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { InvitationId, type OrgId, type UserId } from "../../domain/shared/Ids.ts"
import { Invitation, Member, type OrgRole } from "../../domain/tenancy/Organizations.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { toPage } from "../../domain/shared/Pagination.ts"
import type { Email } from "../../domain/tenancy/Users.ts"
import { Access } from "./Access.ts"
import { pageRequest } from "../shared/Paging.ts"
import { firstOr, onDuplicate } from "../shared/Sql.ts"

interface InvitationRow {
  readonly id: InvitationId
  readonly org_id: OrgId
  readonly org_name: string
  readonly email: string
  readonly org_role: OrgRole
  readonly created_at: Date
}

const toInvitation = (row: InvitationRow) => new Invitation(row, { disableValidation: true })

export class Invitations extends Effect.Service<Invitations>()("Invitations", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access

    const create = (orgId: OrgId, email: Email, role: OrgRole) =>
      Effect.gen(function*() {
        const callerRole = yield* access.requireOrgRole(orgId, "admin")
        if (role === "owner" && callerRole !== "owner") {
          return yield* Effect.fail(new Forbidden({ error: "Only an owner can invite an owner" }))
        }
        const members = yield* sql`
          SELECT 1 FROM org_members m JOIN users u ON u.id = m.user_id
          WHERE m.org_id = ${orgId} AND lower(u.email) = lower(${email})`.pipe(Effect.orDie)
        if (members.length > 0) {
          return yield* Effect.fail(new Conflict({ error: `${email} is a member of ${orgId} already` }))
        }
        const rows = yield* sql<InvitationRow>`
          WITH inserted AS (
            INSERT INTO org_invitations ${sql.insert({ id: InvitationId.make(), org_id: orgId, email, role })}
            RETURNING id, org_id, email, role, created_at
          )
          SELECT i.id, i.org_id, o.name AS org_name, i.email, i.role AS org_role, i.created_at
          FROM inserted i JOIN organizations o ON o.id = i.org_id`.pipe(
          onDuplicate(() =>
            new Conflict({
              error: `${email} has a pending invitation to ${orgId} already; delete it to invite again`
            })
          )
        )
        return toInvitation(rows[0])
      })

    const list = (orgId: OrgId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<InvitationRow>`
          SELECT i.id, i.org_id, o.name AS org_name, i.email, i.role AS org_role, i.created_at
          FROM org_invitations i JOIN organizations o ON o.id = i.org_id
          WHERE i.org_id = ${orgId} ${after === undefined ? sql`` : sql`AND i.id > ${after}`}
          ORDER BY i.id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toInvitation), limit, (invitation) => invitation.id)
      })

    const remove = (orgId: OrgId, invitationId: InvitationId) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        const rows = yield* sql`
          DELETE FROM org_invitations WHERE id = ${invitationId} AND org_id = ${orgId} RETURNING id`.pipe(
          Effect.orDie
        )
        yield* firstOr(() => new NotFound({ error: `Invitation ${invitationId} not found` }))(rows)
      })

    /** The invited user joins; an invitation naming another e-mail address is not found. */
    const accept = (invitationId: InvitationId) =>
      Effect.gen(function*() {
        const userId: UserId = yield* access.requireUser
        return yield* sql.withTransaction(Effect.gen(function*() {
          const invitation = yield* sql<{ org_id: OrgId; role: OrgRole; email: string }>`
            DELETE FROM org_invitations i USING users u
            WHERE i.id = ${invitationId} AND u.id = ${userId} AND lower(u.email) = lower(i.email)
            RETURNING i.org_id, i.role, u.email`.pipe(
            Effect.flatMap(firstOr(() => new NotFound({ error: `Invitation ${invitationId} not found` })))
          )
          const rows = yield* sql<{ created_at: Date; role: OrgRole }>`
            INSERT INTO org_members ${sql.insert({ org_id: invitation.org_id, user_id: userId, role: invitation.role })}
            ON CONFLICT (org_id, user_id) DO NOTHING
            RETURNING created_at, role`
          const joined = yield* firstOr(() =>
            new Conflict({ error: `You are a member of ${invitation.org_id} already` })
          )(rows)
          return new Member({
            org_id: invitation.org_id,
            user_id: userId,
            email: invitation.email,
            role: joined.role,
            created_at: joined.created_at
          }, { disableValidation: true })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

    return { create, list, remove, accept } as const
  })
}) {}
