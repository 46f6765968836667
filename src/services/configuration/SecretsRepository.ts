/**
 * The `secrets` table. A secret's value is kept sealed (SecretBox.ts) in `value_sealed`, which
 * only `sealedValue` reads, with the version of the value (`SecretVersion`).
 */
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { Secret } from "../../domain/configuration/Secrets.ts"
import { OrgId, SecretId, UserId } from "../../domain/shared/Ids.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { lockClause, RowLock, uniqueOrDie } from "../shared/Sql.ts"

const COLUMNS = "id, org_id, name, description, owner_user_id, created_at, updated_at, " +
  "CASE WHEN owner_user_id IS NULL THEN 'organization' ELSE 'personal' END AS owner"

/**
 * Which value a secret holds: its `updated_at` as text, which every change of its value moves
 * (`rotate`). The model's read for a call reads it too (ModelsRepository.findForCall), so the
 * runtime knows when a value it opened before is still the current one.
 */
export const SecretVersion = Schema.String
export type SecretVersion = typeof SecretVersion.Type

/** The SecretVersion of the `secrets` row named `alias` in a statement, as a column expression. */
export const secretVersion = (sql: SqlClient.SqlClient, alias: string): Statement.Fragment =>
  sql`${sql(alias)}.updated_at::text`

const NewSecret = Schema.Struct({
  id: SecretId,
  org_id: OrgId,
  owner_user_id: Schema.NullOr(UserId),
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  value_sealed: Schema.String
})

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.unsafe(COLUMNS)

  /** Organization secrets, and the personal secrets of `userId`. */
  const visibleTo = (userId: string | null) => sql`(owner_user_id IS NULL OR owner_user_id = ${userId})`

  const insert = SqlSchema.findOne({
    Request: NewSecret,
    Result: Secret,
    execute: (secret) => sql`INSERT INTO secrets ${sql.insert(secret)} RETURNING ${columns}`
  })

  const findVisible = SqlSchema.findOneOption({
    Request: Schema.Struct({
      orgId: OrgId,
      secretId: SecretId,
      userId: Schema.NullOr(UserId),
      lock: RowLock
    }),
    Result: Secret,
    execute: ({ lock, orgId, secretId, userId }) => sql`
      SELECT ${columns} FROM secrets
      WHERE id = ${secretId} AND org_id = ${orgId} AND ${visibleTo(userId)} ${lockClause(sql, lock)}`
  })

  const orgSecretsAmong = SqlSchema.findAll({
    Request: Schema.Struct({ orgId: OrgId, ids: Schema.Array(SecretId) }),
    Result: Schema.Struct({ id: SecretId }),
    execute: ({ ids, orgId }) =>
      sql`SELECT id FROM secrets WHERE org_id = ${orgId} AND owner_user_id IS NULL AND id = ANY(${ids}::text[])`
  })

  const personalAmong = SqlSchema.findAll({
    Request: Schema.Array(SecretId),
    Result: Schema.Struct({ id: SecretId, name: Schema.String, owner_user_id: UserId }),
    execute: (ids) =>
      sql`SELECT id, name, owner_user_id FROM secrets WHERE owner_user_id IS NOT NULL AND id = ANY(${ids}::text[]) ORDER BY id`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ orgId: OrgId, userId: Schema.NullOr(UserId) }),
    result: Secret,
    select: ({ orgId, userId }) => sql`SELECT ${columns} FROM secrets WHERE org_id = ${orgId} AND ${visibleTo(userId)}`
  })

  const rotate = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: SecretId, sealed: Schema.String }),
    Result: Secret,
    execute: ({ id, sealed }) =>
      sql`UPDATE secrets SET value_sealed = ${sealed}, updated_at = now() WHERE id = ${id} RETURNING ${columns}`
  })

  const sealedValue = SqlSchema.findOneOption({
    Request: SecretId,
    Result: Schema.Struct({ value_sealed: Schema.String, version: SecretVersion }),
    execute: (id) => sql`SELECT value_sealed, ${secretVersion(sql, "secrets")} AS version FROM secrets WHERE id = ${id}`
  })

  const named = SqlSchema.findAll({
    Request: Schema.Struct({ orgId: OrgId, name: Schema.String }),
    Result: Secret,
    execute: ({ name, orgId }) => sql`SELECT ${columns} FROM secrets WHERE org_id = ${orgId} AND name = ${name}`
  })

  const personalOf = SqlSchema.findAll({
    Request: Schema.Struct({ orgId: OrgId, userId: UserId }),
    Result: Secret,
    execute: ({ orgId, userId }) =>
      sql`SELECT ${columns} FROM secrets WHERE org_id = ${orgId} AND owner_user_id = ${userId} ORDER BY id`
  })

  const remove = SqlSchema.void({
    Request: SecretId,
    execute: (id) => sql`DELETE FROM secrets WHERE id = ${id}`
  })

  return {
    /** Fails with UniqueViolation when the owner has a secret of that name. */
    insert: (secret: typeof NewSecret.Type) => uniqueOrDie(insert(secret)),
    /** A secret of the organization that `userId` (null: an organization key) may see. */
    findVisible: (orgId: OrgId, secretId: SecretId, userId: UserId | null, lock: RowLock = "none") =>
      Effect.orDie(findVisible({ orgId, secretId, userId, lock })),
    /** Which of `ids` are organization secrets (not members' personal ones) of `orgId`, in one read. */
    orgSecretsAmong: (orgId: OrgId, ids: ReadonlyArray<SecretId>) =>
      Effect.map(Effect.orDie(orgSecretsAmong({ orgId, ids })), (rows) => new Set(rows.map((row) => row.id))),
    /** Which of `ids` are members' personal secrets, with their names and owners, in one read. */
    personalAmong: (ids: ReadonlyArray<SecretId>) => Effect.orDie(personalAmong(ids)),
    page: (orgId: OrgId, userId: UserId | null, keyset: Keyset) => page({ orgId, userId }, keyset),
    rotate: (id: SecretId, sealed: string) => Effect.orDie(rotate({ id, sealed })),
    remove: (id: SecretId) => Effect.orDie(remove(id)),
    sealedValue: (id: SecretId) => Effect.orDie(sealedValue(id)),
    /** Every secret of the organization named `name`: its organization secret and members' personal ones. */
    named: (orgId: OrgId, name: string) => Effect.orDie(named({ orgId, name })),
    personalOf: (orgId: OrgId, userId: UserId) => Effect.orDie(personalOf({ orgId, userId }))
  } as const
})

export class SecretsRepository extends Context.Service<SecretsRepository, Effect.Success<typeof make>>()("SecretsRepository") {
  static readonly layer = Layer.effect(this, make)
}
