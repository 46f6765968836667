/** The `organizations` table. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { OrgId } from "../../domain/shared/Ids.ts"
import { Organization } from "../../domain/tenancy/Organizations.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { PipelinedStatements } from "../shared/PipelinedStatements.ts"

const NewOrganization = Schema.Struct({ id: OrgId, name: Schema.String })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reads = yield* PipelinedStatements

  const insert = SqlSchema.findOne({
    Request: NewOrganization,
    Result: Organization,
    execute: (organization) => sql`INSERT INTO organizations ${sql.insert(organization)} RETURNING *`
  })

  const findById = SqlSchema.findOneOption({
    Request: OrgId,
    Result: Organization,
    execute: (id) => reads.run((sql) => sql`SELECT * FROM organizations WHERE id = ${id}`)
  })

  const lock = SqlSchema.findOneOption({
    Request: OrgId,
    Result: Schema.Struct({ id: OrgId }),
    execute: (id) => sql`SELECT id FROM organizations WHERE id = ${id} FOR NO KEY UPDATE`
  })

  const rename = SqlSchema.findOneOption({
    Request: NewOrganization,
    Result: Organization,
    execute: ({ id, name }) => sql`UPDATE organizations SET name = ${name} WHERE id = ${id} RETURNING *`
  })

  const pageAmong = keysetQuery(sql, {
    filter: Schema.Struct({ ids: Schema.Array(OrgId) }),
    result: Organization,
    select: ({ ids }) =>
      ids.length === 0 ? sql`SELECT * FROM organizations WHERE false` : sql`SELECT * FROM organizations WHERE ${sql.in("id", ids)}`
  })

  return {
    insert: (organization: typeof NewOrganization.Type) => Effect.orDie(insert(organization)),
    findById: (id: OrgId) => Effect.orDie(findById(id)),
    rename: (id: OrgId, name: string) => Effect.orDie(rename({ id, name })),
    /**
     * The organization's row locked until the transaction ends, for what is capped per
     * organization (OwnerLimits) and for changes to its members (Members): against the same lock
     * only (FOR NO KEY UPDATE), so rows that refer to the organization are written meanwhile
     * without waiting.
     */
    lock: (id: OrgId) => Effect.orDie(lock(id)),
    /** A page of the organizations among `ids`. */
    pageAmong: (ids: ReadonlyArray<OrgId>, keyset: Keyset) => pageAmong({ ids }, keyset)
  } as const
})

export class OrganizationsRepository extends Context.Service<OrganizationsRepository, Effect.Success<typeof make>>()("OrganizationsRepository") {
  static readonly layer = Layer.effect(this, make)
}
