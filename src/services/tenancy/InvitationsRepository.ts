/** The `org_invitations` table: one pending invitation per organization and e-mail address. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { InvitationId, OrgId } from "../../domain/shared/Ids.ts"
import { Invitation } from "../../domain/tenancy/Invitations.ts"
import { OrgRole } from "../../domain/tenancy/Members.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { uniqueOrDie } from "../shared/Sql.ts"

/** An invitation as stored: an Invitation without its organization's name. */
export const StoredInvitation = Schema.Struct(Struct.omit(Invitation.fields, ["org_name"]))
export type StoredInvitation = typeof StoredInvitation.Type

const NewInvitation = Schema.Struct({ id: InvitationId, org_id: OrgId, email: Schema.String, role: OrgRole })

const COLUMNS = "id, org_id, email, role AS org_role, created_at"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.unsafe(COLUMNS)

  const insert = SqlSchema.findOne({
    Request: NewInvitation,
    Result: StoredInvitation,
    execute: (invitation) => sql`INSERT INTO org_invitations ${sql.insert(invitation)} RETURNING ${columns}`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ orgId: OrgId }),
    result: StoredInvitation,
    select: ({ orgId }) => sql`SELECT ${columns} FROM org_invitations WHERE org_id = ${orgId}`
  })

  /** The pending invitations to an e-mail address, each with its organization's name. */
  const pageForEmail = keysetQuery(sql, {
    filter: Schema.Struct({ email: Schema.String }),
    result: Schema.Struct(Invitation.fields),
    column: "i.id",
    select: ({ email }) => sql`
      SELECT i.id, i.org_id, o.name AS org_name, i.email, i.role AS org_role, i.created_at
      FROM org_invitations i JOIN organizations o ON o.id = i.org_id
      WHERE lower(i.email) = lower(${email})`
  })

  const remove = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgId: OrgId, id: InvitationId }),
    Result: Schema.Struct({ id: InvitationId }),
    execute: ({ id, orgId }) => sql`DELETE FROM org_invitations WHERE id = ${id} AND org_id = ${orgId} RETURNING id`
  })

  const take = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: InvitationId, email: Schema.String }),
    Result: StoredInvitation,
    execute: ({ email, id }) =>
      sql`DELETE FROM org_invitations WHERE id = ${id} AND lower(email) = lower(${email}) RETURNING ${columns}`
  })

  return {
    /** Fails with UniqueViolation when the address has a pending invitation to the organization. */
    insert: (invitation: typeof NewInvitation.Type) => uniqueOrDie(insert(invitation)),
    page: (orgId: OrgId, keyset: Keyset) => page({ orgId }, keyset),
    pageForEmail: (email: string, keyset: Keyset) => pageForEmail({ email }, keyset),
    /** Whether there was such an invitation to remove. */
    remove: (orgId: OrgId, id: InvitationId) =>
      Effect.map(Effect.orDie(remove({ orgId, id })), Option.isSome),
    /** Removes and returns the invitation when it names `email`. */
    take: (id: InvitationId, email: string) => Effect.orDie(take({ id, email }))
  } as const
})

export class InvitationsRepository extends Context.Service<InvitationsRepository, Effect.Success<typeof make>>()("InvitationsRepository") {
  static readonly layer = Layer.effect(this, make)
}
