import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { Conflict, NotFound } from "../../domain/shared/Errors.ts"
import { UserId } from "../../domain/shared/Ids.ts"
import type { Email } from "../../domain/tenancy/Users.ts"
import { User } from "../../domain/tenancy/Users.ts"
import { firstOr } from "../shared/Sql.ts"

interface UserRow {
  readonly id: UserId
  readonly email: string
  readonly created_at: Date
}

const toUser = (row: UserRow) => new User(row, { disableValidation: true })

export class Users extends Effect.Service<Users>()("Users", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findByEmail = (email: string) =>
      sql<UserRow>`SELECT id, email, created_at FROM users WHERE lower(email) = lower(${email})`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toUser)),
        Effect.orDie
      )

    const create = (email: Email) =>
      Effect.gen(function*() {
        if (Option.isSome(yield* findByEmail(email))) {
          return yield* Effect.fail(new Conflict({ error: `A user with e-mail ${email} exists already` }))
        }
        const rows = yield* sql<UserRow>`
          INSERT INTO users ${sql.insert({ id: UserId.make(), email })}
          RETURNING id, email, created_at`.pipe(Effect.orDie)
        return toUser(rows[0])
      })

    const get = (id: UserId) =>
      sql<UserRow>`SELECT id, email, created_at FROM users WHERE id = ${id}`.pipe(
        Effect.orDie,
        Effect.flatMap(firstOr(() => new NotFound({ error: `User ${id} not found` }))),
        Effect.map(toUser)
      )

    /** The user with this e-mail, created when there is none. */
    const ensure = (email: Email) =>
      Effect.flatMap(findByEmail(email), Option.match({
        onSome: Effect.succeed,
        onNone: () => Effect.orDie(create(email))
      }))

    return { create, get, findByEmail, ensure } as const
  })
}) {}
