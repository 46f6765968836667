/**
 * AGENT_PLATFORM_BOOTSTRAP_TOKEN: at start, make sure the bootstrap admin user
 * (AGENT_PLATFORM_BOOTSTRAP_EMAIL, default admin@localhost) exists and that the token is its
 * personal API key named "bootstrap". Idempotent across restarts; a changed token replaces the
 * previous bootstrap key. One process at a time (src/layers/StartupLock.ts): servers started
 * together would otherwise all create the same user.
 */
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { Email } from "../domain/tenancy/Users.ts"
import { ApiKeys } from "../services/tenancy/ApiKeys.ts"
import { Users } from "../services/tenancy/Users.ts"
import { AppConfig } from "./AppConfig.ts"
import { withStartupLock } from "./StartupLock.ts"

const BOOTSTRAP_KEY_NAME = "bootstrap"

class InvalidBootstrapEmail extends Schema.TaggedError<InvalidBootstrapEmail>()("InvalidBootstrapEmail", {
  email: Schema.String
}) {
  override get message() {
    return `AGENT_PLATFORM_BOOTSTRAP_EMAIL is not an e-mail address: ${this.email}`
  }
}

export const BootstrapLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const token = config.bootstrapToken
    if (Option.isNone(token)) return
    const email = yield* Schema.decodeEffect(Email)(config.bootstrapEmail).pipe(
      Effect.mapError(() => new InvalidBootstrapEmail({ email: config.bootstrapEmail }))
    )
    const { created, user } = yield* withStartupLock(Effect.gen(function*() {
      const user = yield* Effect.flatMap(Users, (users) => users.ensure(email))
      const created = yield* Effect.flatMap(ApiKeys, (apiKeys) =>
        apiKeys.ensurePersonalToken(user.id, BOOTSTRAP_KEY_NAME, Redacted.value(token.value)))
      return { created, user }
    }))
    yield* Effect.logInfo(
      Option.isSome(created) ? "bootstrap API key installed" : "bootstrap API key already installed"
    ).pipe(Effect.annotateLogs({ user_id: user.id, email: user.email }))
  })
).pipe(Layer.provide(Layer.merge(Users.layer, ApiKeys.layer)))
