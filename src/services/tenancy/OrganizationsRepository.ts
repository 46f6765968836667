/** The `organizations` table. */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { OrgId } from "../../domain/shared/Ids.ts"
import { Organization } from "../../domain/tenancy/Organizations.ts"
import { type Keyset, KeysetFields, keysetSql } from "../shared/Paging.ts"

const NewOrganization = Schema.Struct({ id: OrgId, name: Schema.String })

export class OrganizationsRepository extends Effect.Service<OrganizationsRepository>()("OrganizationsRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.single({
      Request: NewOrganization,
      Result: Organization,
      execute: (organization) => sql`INSERT INTO organizations ${sql.insert(organization)} RETURNING *`
    })

    const findById = SqlSchema.findOne({
      Request: OrgId,
      Result: Organization,
      execute: (id) => sql`SELECT * FROM organizations WHERE id = ${id}`
    })

    const rename = SqlSchema.findOne({
      Request: NewOrganization,
      Result: Organization,
      execute: ({ id, name }) => sql`UPDATE organizations SET name = ${name} WHERE id = ${id} RETURNING *`
    })

    const pageAmong = SqlSchema.findAll({
      Request: Schema.Struct({ ids: Schema.Array(OrgId), ...KeysetFields }),
      Result: Organization,
      execute: ({ ids, ...keyset }) => {
        const { after, orderAndLimit } = keysetSql(sql, "id", keyset)
        return ids.length === 0
          ? Effect.succeed([])
          : sql`SELECT * FROM organizations WHERE ${sql.in("id", ids)} ${after} ${orderAndLimit}`
      }
    })

    return {
      insert: (organization: typeof NewOrganization.Type) => Effect.orDie(insert(organization)),
      findById: (id: OrgId) => Effect.orDie(findById(id)),
      rename: (id: OrgId, name: string) => Effect.orDie(rename({ id, name })),
      /** A page of the organizations among `ids`. */
      pageAmong: (ids: ReadonlyArray<OrgId>, keyset: Keyset) => Effect.orDie(pageAmong({ ids, ...keyset }))
    } as const
  })
}) {}
