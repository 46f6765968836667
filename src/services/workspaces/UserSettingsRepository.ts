/** The `user_settings` table: one JSON document per user. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { UserId } from "../../domain/shared/Ids.ts"
import { DEFAULT_USER_SETTINGS, UserSettings } from "../../domain/workspaces/UserSettings.ts"
import { lockClause, RowLock } from "../shared/Sql.ts"

const Row = Schema.Struct({ document: UserSettings })
const encodeDocument = Schema.encodeSync(UserSettings)

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const find = SqlSchema.findOneOption({
    Request: Schema.Struct({ userId: UserId, lock: RowLock }),
    Result: Row,
    execute: ({ lock, userId }) =>
      sql`SELECT document FROM user_settings WHERE user_id = ${userId} ${lockClause(sql, lock)}`
  })

  /** The user's row, with the default document when there is none yet; an existing row is left as it is. */
  const ensure = SqlSchema.void({
    Request: UserId,
    execute: (userId) =>
      sql`INSERT INTO user_settings (user_id, document)
          VALUES (${userId}, ${JSON.stringify(encodeDocument(DEFAULT_USER_SETTINGS))}::jsonb)
          ON CONFLICT (user_id) DO NOTHING`
  })

  const save = SqlSchema.void({
    Request: Schema.Struct({ userId: UserId, document: UserSettings }),
    execute: ({ document, userId }) =>
      sql`UPDATE user_settings SET document = ${JSON.stringify(document)}::jsonb, updated_at = now()
          WHERE user_id = ${userId}`
  })

  return {
    /** The stored document, with `lock` on its row. */
    find: (userId: UserId, lock: RowLock = "none") =>
      Effect.orDie(Effect.map(find({ userId, lock }), Option.map((row) => row.document))),
    ensure: (userId: UserId) => Effect.orDie(ensure(userId)),
    save: (userId: UserId, document: UserSettings) => Effect.orDie(save({ userId, document }))
  } as const
})

export class UserSettingsRepository extends Context.Service<UserSettingsRepository, Effect.Success<typeof make>>()("UserSettingsRepository") {
  static readonly layer = Layer.effect(this, make)
}
