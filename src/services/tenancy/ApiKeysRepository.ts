/**
 * The `api_keys` table: personal keys (a `user_id`) and organization keys (an `org_id` and a
 * `role`). A request's key is read with its caller's standing in the organization and project
 * of the request's path (`findOwnerWithStanding`, joining the memberships and the project).
 */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { ApiKeyId, OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import { OrganizationApiKey, PersonalApiKey } from "../../domain/tenancy/ApiKeys.ts"
import { AssignableRole, OrgRole } from "../../domain/tenancy/Members.ts"
import { ProjectRole } from "../../domain/tenancy/ProjectMembers.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { PipelinedStatements } from "../shared/PipelinedStatements.ts"

/** Whom a key acts for: its user, or its organization with the key's role. */
export const KeyOwner = Schema.Union([
  Schema.Struct({ id: ApiKeyId, user_id: UserId, org_id: Schema.Null, role: Schema.Null }),
  Schema.Struct({ id: ApiKeyId, user_id: Schema.Null, org_id: OrgId, role: AssignableRole })
])
export type KeyOwner = typeof KeyOwner.Type

/** A key's owner and its caller's standing in an organization and project (`findOwnerWithStanding`). */
const OwnerWithStanding = Schema.Struct({
  owner: KeyOwner,
  standing: Schema.Struct({
    member_role: Schema.NullOr(OrgRole),
    project_found: Schema.Boolean,
    project_role: Schema.NullOr(ProjectRole)
  })
})

const Hashed = { id: ApiKeyId, token_hash: Schema.String, name: Schema.String }
const NewPersonalKey = Schema.Struct({ ...Hashed, user_id: UserId })
const NewOrganizationKey = Schema.Struct({ ...Hashed, org_id: OrgId, role: AssignableRole })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reads = yield* PipelinedStatements

  const findOwner = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: KeyOwner,
    execute: (hash) => reads.run((sql) => sql`SELECT id, user_id, org_id, role FROM api_keys WHERE token_hash = ${hash}`)
  })

  // The standing of MembersRepository.standing, for the key's user (none for an organization
  // key), with the project looked up whether or not the user is a member.
  const findOwnerWithStanding = SqlSchema.findOneOption({
    Request: Schema.Struct({ hash: Schema.String, orgId: OrgId, projectId: Schema.NullOr(ProjectId) }),
    Result: OwnerWithStanding,
    execute: ({ hash, orgId, projectId }) =>
      Effect.map(
        reads.run((sql) => sql`
          SELECT k.id, k.user_id, k.org_id, k.role,
            m.role AS member_role, p.id IS NOT NULL AS project_found, pm.role AS project_role
          FROM api_keys k
            LEFT JOIN org_members m ON m.org_id = ${orgId} AND m.user_id = k.user_id
            LEFT JOIN projects p ON p.id = ${projectId} AND p.org_id = ${orgId}
            LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = k.user_id
          WHERE k.token_hash = ${hash}`),
        (rows) => rows.map((row) => ({ owner: row, standing: row }))
      )
  })

  const findOwnerById = SqlSchema.findOneOption({
    Request: ApiKeyId,
    Result: KeyOwner,
    execute: (keyId) => reads.run((sql) => sql`SELECT id, user_id, org_id, role FROM api_keys WHERE id = ${keyId}`)
  })

  const insertPersonal = SqlSchema.findOne({
    Request: NewPersonalKey,
    Result: PersonalApiKey,
    execute: (key) => sql`INSERT INTO api_keys ${sql.insert(key)} RETURNING *`
  })

  const insertForOrganization = SqlSchema.findOne({
    Request: NewOrganizationKey,
    Result: OrganizationApiKey,
    execute: (key) => sql`INSERT INTO api_keys ${sql.insert(key)} RETURNING *`
  })

  const count = SqlSchema.findOne({
    Request: Schema.Struct({ column: Schema.Literals(["user_id", "org_id"]), id: Schema.String }),
    Result: Schema.Struct({ count: Schema.Number }),
    execute: ({ column, id }) => sql`SELECT count(*)::int AS count FROM api_keys WHERE ${sql(column)} = ${id}`
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

  const remove = SqlSchema.findOneOption({
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

  const exists = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ id: ApiKeyId }),
    execute: (id) => sql`SELECT id FROM api_keys WHERE id = ${id}`
  })

  return {
    /** Whether the key still exists (it was not revoked). */
    exists: (keyId: string) => Effect.map(Effect.orDie(exists(keyId)), Option.isSome),
    /** The key a token hash names. A database failure stays a failure: authentication answers 503 on it. */
    findOwner: (tokenHash: string) => findOwner(tokenHash).pipe(Effect.catchTag("SchemaError", Effect.die)),
    /**
     * The key a token hash names, with its caller's standing in the organization `orgId` and its
     * project `projectId`, in one statement. A database failure stays a failure.
     */
    findOwnerWithStanding: (tokenHash: string, orgId: OrgId, projectId: ProjectId | null) =>
      findOwnerWithStanding({ hash: tokenHash, orgId, projectId }).pipe(Effect.catchTag("SchemaError", Effect.die)),
    /** The key of an id, while it exists. */
    findOwnerById: (keyId: ApiKeyId) => Effect.orDie(findOwnerById(keyId)),
    /** How many keys the owner has. */
    count: (owner: { readonly userId: UserId } | { readonly orgId: OrgId }) =>
      Effect.map(
        Effect.orDie(count("userId" in owner ? { column: "user_id", id: owner.userId } : { column: "org_id", id: owner.orgId })),
        (row) => row.count
      ),
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

export class ApiKeysRepository extends Context.Service<ApiKeysRepository, Effect.Success<typeof make>>()("ApiKeysRepository") {
  static readonly layer = Layer.effect(this, make)
}
