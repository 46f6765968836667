/** The `api_keys` table: personal keys (a `user_id`) and organization keys (an `org_id` and a `role`). */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { ApiKeyId, OrgId, UserId } from "../../domain/shared/Ids.ts"
import { OrganizationApiKey, PersonalApiKey } from "../../domain/tenancy/ApiKeys.ts"
import { AssignableRole } from "../../domain/tenancy/Members.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"

/** Whom a key acts for: its user, or its organization with the key's role. */
export const KeyOwner = Schema.Union(
  Schema.Struct({ id: ApiKeyId, user_id: UserId, org_id: Schema.Null, role: Schema.Null }),
  Schema.Struct({ id: ApiKeyId, user_id: Schema.Null, org_id: OrgId, role: AssignableRole })
)
export type KeyOwner = typeof KeyOwner.Type

const Hashed = { id: ApiKeyId, token_hash: Schema.String, name: Schema.String }
const NewPersonalKey = Schema.Struct({ ...Hashed, user_id: UserId })
const NewOrganizationKey = Schema.Struct({ ...Hashed, org_id: OrgId, role: AssignableRole })

export class ApiKeysRepository extends Effect.Service<ApiKeysRepository>()("ApiKeysRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findOwner = SqlSchema.findOne({
      Request: Schema.String,
      Result: KeyOwner,
      execute: (hash) => sql`SELECT id, user_id, org_id, role FROM api_keys WHERE token_hash = ${hash}`
    })

    const findOwnerById = SqlSchema.findOne({
      Request: ApiKeyId,
      Result: KeyOwner,
      execute: (keyId) => sql`SELECT id, user_id, org_id, role FROM api_keys WHERE id = ${keyId}`
    })

    const insertPersonal = SqlSchema.single({
      Request: NewPersonalKey,
      Result: PersonalApiKey,
      execute: (key) => sql`INSERT INTO api_keys ${sql.insert(key)} RETURNING *`
    })

    const insertForOrganization = SqlSchema.single({
      Request: NewOrganizationKey,
      Result: OrganizationApiKey,
      execute: (key) => sql`INSERT INTO api_keys ${sql.insert(key)} RETURNING *`
    })

    const pagePersonal = keysetQuery(sql, {
      filter: Schema.Struct({ userId: UserId }),
      result: PersonalApiKey,
      select: ({ userId }) => sql`SELECT * FROM api_keys WHERE user_id = ${userId}`
    })

    const pageForOrganization = keysetQuery(sql, {
      filter: Schema.Struct({ orgId: OrgId }),
      result: OrganizationApiKey,
      select: ({ orgId }) => sql`SELECT * FROM api_keys WHERE org_id = ${orgId}`
    })

    const remove = SqlSchema.findOne({
      Request: Schema.Struct({ keyId: ApiKeyId, userId: Schema.UndefinedOr(UserId), orgId: Schema.UndefinedOr(OrgId) }),
      Result: Schema.Struct({ id: ApiKeyId }),
      execute: ({ keyId, orgId, userId }) => sql`
        DELETE FROM api_keys WHERE id = ${keyId}
        AND ${userId !== undefined ? sql`user_id = ${userId}` : sql`org_id = ${orgId ?? null}`}
        RETURNING id`
    })

    const deletePersonalNamed = SqlSchema.void({
      Request: Schema.Struct({ userId: UserId, name: Schema.String }),
      execute: ({ name, userId }) => sql`DELETE FROM api_keys WHERE user_id = ${userId} AND name = ${name}`
    })

    const deleteByTokenHash = SqlSchema.void({
      Request: Schema.String,
      execute: (hash) => sql`DELETE FROM api_keys WHERE token_hash = ${hash}`
    })

    const exists = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: ApiKeyId }),
      execute: (id) => sql`SELECT id FROM api_keys WHERE id = ${id}`
    })

    return {
      /** Whether the key still exists (it was not revoked). */
      exists: (keyId: string) => Effect.map(Effect.orDie(exists(keyId)), Option.isSome),
      /** The key a token hash names. A database failure stays a failure: authentication answers 503 on it. */
      findOwner: (tokenHash: string) => findOwner(tokenHash).pipe(Effect.catchTag("ParseError", Effect.die)),
      /** The key of an id, while it exists. */
      findOwnerById: (keyId: ApiKeyId) => Effect.orDie(findOwnerById(keyId)),
      insertPersonal: (key: typeof NewPersonalKey.Type) => Effect.orDie(insertPersonal(key)),
      insertForOrganization: (key: typeof NewOrganizationKey.Type) => Effect.orDie(insertForOrganization(key)),
      pagePersonal: (userId: UserId, keyset: Keyset) => pagePersonal({ userId }, keyset),
      pageForOrganization: (orgId: OrgId, keyset: Keyset) => pageForOrganization({ orgId }, keyset),
      /** Deletes the key when it belongs to `owner`; whether it did. */
      remove: (owner: { readonly userId: UserId } | { readonly orgId: OrgId }, keyId: ApiKeyId) =>
        Effect.map(
          Effect.orDie(remove({ keyId, userId: "userId" in owner ? owner.userId : undefined, orgId: "orgId" in owner ? owner.orgId : undefined })),
          Option.isSome
        ),
      deletePersonalNamed: (userId: UserId, name: string) => Effect.orDie(deletePersonalNamed({ userId, name })),
      deleteByTokenHash: (tokenHash: string) => Effect.orDie(deleteByTokenHash(tokenHash))
    } as const
  })
}) {}
