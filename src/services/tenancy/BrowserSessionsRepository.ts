/**
 * The `browser_sessions` table: a session's cookie and CSRF token are kept as SHA-256 hashes, with
 * the personal API key that opened it (the session ends when that key is deleted: the foreign
 * key cascades) and when it expires. Opening a session removes every expired one, so the table
 * holds at most the sessions opened in the last lifetime (only openings make it grow).
 */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { ApiKeyId, BrowserSessionId, UserId } from "../../domain/shared/Ids.ts"
import { Timestamp } from "../../domain/shared/Timestamp.ts"

const NewSession = Schema.Struct({
  id: BrowserSessionId,
  token_hash: Schema.String,
  csrf_token_hash: Schema.String,
  api_key_id: ApiKeyId,
  lifetime_seconds: Schema.Int
})

const StoredSession = Schema.Struct({ id: BrowserSessionId, created_at: Timestamp, expires_at: Timestamp })

/** What authenticating a live session needs: its CSRF token's hash and its key's token hash. */
const ActiveSession = Schema.Struct({ csrf_token_hash: Schema.String, key_token_hash: Schema.String })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.findOne({
    Request: NewSession,
    Result: StoredSession,
    execute: (session) => sql`
      WITH expired AS (DELETE FROM browser_sessions WHERE expires_at <= now())
      INSERT INTO browser_sessions (id, token_hash, csrf_token_hash, api_key_id, expires_at)
      VALUES (${session.id}, ${session.token_hash}, ${session.csrf_token_hash}, ${session.api_key_id},
        now() + make_interval(secs => ${session.lifetime_seconds}))
      RETURNING id, created_at, expires_at`
  })

  const findActive = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: ActiveSession,
    execute: (tokenHash) => sql`
      SELECT s.csrf_token_hash, k.token_hash AS key_token_hash
      FROM browser_sessions s JOIN api_keys k ON k.id = s.api_key_id
      WHERE s.token_hash = ${tokenHash} AND s.expires_at > now()`
  })

  const remove = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: BrowserSessionId, userId: UserId }),
    Result: Schema.Struct({ token_hash: Schema.String }),
    execute: ({ id, userId }) => sql`
      DELETE FROM browser_sessions s USING api_keys k
      WHERE s.id = ${id} AND k.id = s.api_key_id AND k.user_id = ${userId}
      RETURNING s.token_hash`
  })

  return {
    insert: (session: typeof NewSession.Type) => Effect.orDie(insert(session)),
    /** The unexpired session of a cookie's hash. A database failure stays a failure: authentication answers 503 on it. */
    findActive: (tokenHash: string) => findActive(tokenHash).pipe(Effect.catchTag("SchemaError", Effect.die)),
    /** Deletes the session when it is one of `userId`'s; its cookie's hash if it did. */
    remove: (id: BrowserSessionId, userId: UserId) => Effect.orDie(remove({ id, userId }))
  } as const
})

export class BrowserSessionsRepository extends Context.Service<BrowserSessionsRepository, Effect.Success<typeof make>>()(
  "BrowserSessionsRepository"
) {
  static readonly layer = Layer.effect(this, make)
}
