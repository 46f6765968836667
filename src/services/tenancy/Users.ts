/** Users (src/domain/tenancy/Users.ts): made by the CLI, the bootstrap step and tests; read by everyone. */
import { Context, Effect, Layer, Option } from "effect"
import { Conflict, NotFound } from "../../domain/shared/Errors.ts"
import { UserId } from "../../domain/shared/Ids.ts"
import type { Email } from "../../domain/tenancy/Users.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { UsersRepository } from "./UsersRepository.ts"

const make = Effect.gen(function*() {
  const users = yield* UsersRepository
  const ids = yield* IdGenerator

  const taken = (email: string) => () => new Conflict({ error: `A user with e-mail ${email} exists already` })

  const create = (email: Email) =>
    Effect.gen(function*() {
      if (Option.isSome(yield* users.findByEmail(email))) return yield* Effect.fail(taken(email)())
      return yield* users.insert({ id: yield* ids.make(UserId), email }).pipe(
        replaceFailure("UniqueViolation", taken(email), "Debug")
      )
    })

  const get = (id: UserId) => users.findById(id).pipe(someOrFail(() => new NotFound({ error: `User ${id} not found` })))

  /** The user with this e-mail, created when there is none. */
  const ensure = (email: Email) =>
    Effect.flatMap(users.findByEmail(email), Option.match({
      onSome: Effect.succeed,
      onNone: () => Effect.orDie(create(email))
    }))

  return { create, get, findByEmail: users.findByEmail, ensure } as const
})

export class Users extends Context.Service<Users, Effect.Success<typeof make>>()("Users") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      UsersRepository.layer,
      IdGenerator.layer
    ])
  )
}
