/** The `daemon_tokens` table: only the SHA-256 of a token is stored. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { DaemonToken } from "../../domain/machines/DaemonTokens.ts"
import { DaemonTokenId, OrgId } from "../../domain/shared/Ids.ts"
import { Timestamp } from "../../domain/shared/Timestamp.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"

const COLUMNS = "id, org_id, name, created_at, expires_at, last_used_at"

const NewToken = Schema.Struct({
  id: DaemonTokenId,
  org_id: OrgId,
  name: Schema.String,
  token_hash: Schema.String,
  expires_at: Schema.NullOr(Timestamp)
})

/** A token that is still valid: not deleted, not expired. */
const Valid = Schema.Struct({ id: DaemonTokenId, org_id: OrgId })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.unsafe(COLUMNS)

  const insert = SqlSchema.findOne({
    Request: NewToken,
    Result: DaemonToken,
    execute: (token) => sql`INSERT INTO daemon_tokens ${sql.insert(token)} RETURNING ${columns}`
  })

  const page = keysetQuery(sql, {
    filter: OrgId,
    result: DaemonToken,
    select: (orgId) => sql`SELECT ${columns} FROM daemon_tokens WHERE org_id = ${orgId}`
  })

  const remove = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgId: OrgId, id: DaemonTokenId }),
    Result: Schema.Struct({ id: DaemonTokenId }),
    execute: ({ id, orgId }) => sql`DELETE FROM daemon_tokens WHERE id = ${id} AND org_id = ${orgId} RETURNING id`
  })

  /** The valid token with this hash, marked used. */
  const use = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: Valid,
    execute: (hash) => sql`
      UPDATE daemon_tokens SET last_used_at = now()
      WHERE token_hash = ${hash} AND (expires_at IS NULL OR expires_at > now())
      RETURNING id, org_id`
  })

  const findValid = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: Valid,
    execute: (id) => sql`
      SELECT id, org_id FROM daemon_tokens WHERE id = ${id} AND (expires_at IS NULL OR expires_at > now())`
  })

  return {
    insert: (token: typeof NewToken.Type) => Effect.orDie(insert(token)),
    page: (orgId: OrgId, keyset: Keyset) => page(orgId, keyset),
    /** Whether there was such a token to delete. */
    remove: (orgId: OrgId, id: DaemonTokenId) => Effect.map(Effect.orDie(remove({ orgId, id })), Option.isSome),
    /** The valid token whose hash this is (its last use recorded). A database failure stays a failure. */
    use: (hash: string) => use(hash).pipe(Effect.catchTag("SchemaError", Effect.die)),
    /** Whether the token still exists and has not expired. */
    isValid: (id: string) => Effect.map(Effect.orDie(findValid(id)), Option.isSome)
  } as const
})

export class DaemonTokensRepository extends Context.Service<DaemonTokensRepository, Effect.Success<typeof make>>()("DaemonTokensRepository") {
  static readonly layer = Layer.effect(this, make)
}
