/**
 * The `org_members` table: who belongs to which organization, with which role. `standing` reads a
 * member's project in the same statement (the project and the member's role in it), for access
 * checks, which run on nearly every request.
 */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema, Struct } from "effect"
import { OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import { Member, OrgRole } from "../../domain/tenancy/Members.ts"
import { ProjectRole } from "../../domain/tenancy/ProjectMembers.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"

/** A membership as stored: a Member without the user's e-mail. */
export const Membership = Schema.Struct(Struct.omit(Member.fields, ["email"]))
export type Membership = typeof Membership.Type

const MemberKey = Schema.Struct({ orgId: OrgId, userId: UserId })

/** A member's role in an organization, whether a project is the organization's, and the member's role in it. */
export const Standing = Schema.Struct({
  role: OrgRole,
  project_found: Schema.Boolean,
  project_role: Schema.NullOr(ProjectRole)
})
export type Standing = typeof Standing.Type
const NewMembership = Schema.Struct({ org_id: OrgId, user_id: UserId, role: OrgRole })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.findOneOption({
    Request: NewMembership,
    Result: Membership,
    execute: (membership) =>
      sql`INSERT INTO org_members ${sql.insert(membership)} ON CONFLICT (org_id, user_id) DO NOTHING RETURNING *`
  })

  const find = (lock: "" | "FOR SHARE" | "FOR UPDATE") =>
    SqlSchema.findOneOption({
      Request: MemberKey,
      Result: Membership,
      execute: ({ orgId, userId }) =>
        sql`SELECT * FROM org_members WHERE org_id = ${orgId} AND user_id = ${userId} ${sql.unsafe(lock)}`
    })
  const findMembership = find("")
  const shareMembership = find("FOR SHARE")
  const lockMembership = find("FOR UPDATE")

  const standing = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgId: OrgId, userId: UserId, projectId: ProjectId }),
    Result: Standing,
    execute: ({ orgId, projectId, userId }) =>
      sql`
        SELECT m.role, p.id IS NOT NULL AS project_found, pm.role AS project_role
        FROM org_members m
          LEFT JOIN projects p ON p.id = ${projectId} AND p.org_id = m.org_id
          LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = m.user_id
        WHERE m.org_id = ${orgId} AND m.user_id = ${userId}`
  })

  const orgIdsOf = SqlSchema.findAll({
    Request: UserId,
    Result: Schema.Struct({ org_id: OrgId }),
    execute: (userId) => sql`SELECT org_id FROM org_members WHERE user_id = ${userId}`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ orgId: OrgId }),
    result: Membership,
    column: "user_id",
    select: ({ orgId }) => sql`SELECT * FROM org_members WHERE org_id = ${orgId}`
  })

  const countOwners = SqlSchema.findOne({
    Request: OrgId,
    Result: Schema.Struct({ count: Schema.Number }),
    execute: (orgId) => sql`SELECT count(*)::int AS count FROM org_members WHERE org_id = ${orgId} AND role = 'owner'`
  })

  const updateRole = SqlSchema.findOne({
    Request: Schema.Struct({ orgId: OrgId, userId: UserId, role: OrgRole }),
    Result: Membership,
    execute: ({ orgId, role, userId }) =>
      sql`UPDATE org_members SET role = ${role} WHERE org_id = ${orgId} AND user_id = ${userId} RETURNING *`
  })

  const remove = SqlSchema.void({
    Request: MemberKey,
    execute: ({ orgId, userId }) => sql`DELETE FROM org_members WHERE org_id = ${orgId} AND user_id = ${userId}`
  })

  return {
    /** Adds the membership; none when the user is a member already. */
    insert: (membership: typeof NewMembership.Type) => Effect.orDie(insert(membership)),
    find: (orgId: OrgId, userId: UserId) => Effect.orDie(findMembership({ orgId, userId })),
    /** The user's standing in the organization and in its project `projectId`; none when not a member. */
    standing: (orgId: OrgId, userId: UserId, projectId: ProjectId) =>
      Effect.orDie(standing({ orgId, userId, projectId })),
    /** The membership, held until the transaction ends so that it is not removed meanwhile. */
    share: (orgId: OrgId, userId: UserId) => Effect.orDie(shareMembership({ orgId, userId })),
    /** The membership, locked for a change until the transaction ends. */
    lock: (orgId: OrgId, userId: UserId) => Effect.orDie(lockMembership({ orgId, userId })),
    /** How many owners the organization has. */
    countOwners: (orgId: OrgId) => Effect.map(Effect.orDie(countOwners(orgId)), (row) => row.count),
    orgIdsOf: (userId: UserId) =>
      Effect.map(Effect.orDie(orgIdsOf(userId)), (rows) => rows.map((row) => row.org_id)),
    page: (orgId: OrgId, keyset: Keyset) => page({ orgId }, keyset),
    updateRole: (orgId: OrgId, userId: UserId, role: OrgRole) => Effect.orDie(updateRole({ orgId, userId, role })),
    remove: (orgId: OrgId, userId: UserId) => Effect.orDie(remove({ orgId, userId }))
  } as const
})

export class MembersRepository extends Context.Service<MembersRepository, Effect.Success<typeof make>>()("MembersRepository") {
  static readonly layer = Layer.effect(this, make)
}
