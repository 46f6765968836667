/** The `users` table. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { UserId } from "../../domain/shared/Ids.ts"
import { User } from "../../domain/tenancy/Users.ts"
import { uniqueOrDie } from "../shared/Sql.ts"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.findOne({
    Request: Schema.Struct({ id: UserId, email: Schema.String }),
    Result: User,
    execute: (user) => sql`INSERT INTO users ${sql.insert(user)} RETURNING *`
  })

  const findById = SqlSchema.findOneOption({
    Request: UserId,
    Result: User,
    execute: (id) => sql`SELECT * FROM users WHERE id = ${id}`
  })

  /** E-mail addresses compare without case. */
  const findByEmail = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: User,
    execute: (email) => sql`SELECT * FROM users WHERE lower(email) = lower(${email})`
  })

  const lock = SqlSchema.findOneOption({
    Request: UserId,
    Result: Schema.Struct({ id: UserId }),
    execute: (id) => sql`SELECT id FROM users WHERE id = ${id} FOR NO KEY UPDATE`
  })

  const findByIds = SqlSchema.findAll({
    Request: Schema.Array(UserId),
    Result: User,
    execute: (ids) => ids.length === 0 ? Effect.succeed([]) : sql`SELECT * FROM users WHERE ${sql.in("id", ids)}`
  })

  return {
    /** Fails with UniqueViolation when the e-mail address is taken. */
    insert: (user: { readonly id: UserId; readonly email: string }) => uniqueOrDie(insert(user)),
    findById: (id: UserId) => Effect.orDie(findById(id)),
    findByEmail: (email: string) => Effect.orDie(findByEmail(email)),
    findByIds: (ids: ReadonlyArray<UserId>) => Effect.orDie(findByIds(ids)),
    /**
     * The user's row locked until the transaction ends, for what is capped per user (OwnerLimits):
     * against the same lock only (FOR NO KEY UPDATE), so rows that refer to the user are written
     * meanwhile without waiting.
     */
    lock: (id: UserId) => Effect.orDie(lock(id))
  } as const
})

export class UsersRepository extends Context.Service<UsersRepository, Effect.Success<typeof make>>()("UsersRepository") {
  static readonly layer = Layer.effect(this, make)
}
