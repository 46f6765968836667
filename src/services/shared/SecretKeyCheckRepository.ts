/** The `secret_key_check` table: the fingerprint of the key the database's secrets are encrypted with. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const record = SqlSchema.void({
    Request: Schema.String,
    execute: (fingerprint) =>
      sql`INSERT INTO secret_key_check (fingerprint) VALUES (${fingerprint}) ON CONFLICT (singleton) DO NOTHING`
  })

  const find = SqlSchema.findOne({
    Request: Schema.Void,
    Result: Schema.Struct({ fingerprint: Schema.String }),
    execute: () => sql`SELECT fingerprint FROM secret_key_check`
  })

  return {
    /** The recorded fingerprint, after recording `fingerprint` if none was. */
    recordOrRead: (fingerprint: string) =>
      record(fingerprint).pipe(
        Effect.andThen(find(undefined)),
        Effect.map((row) => row.fingerprint),
        Effect.orDie
      )
  } as const
})

export class SecretKeyCheckRepository extends Context.Service<SecretKeyCheckRepository, Effect.Success<typeof make>>()("SecretKeyCheckRepository") {
  static readonly layer = Layer.effect(this, make)
}
