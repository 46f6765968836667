/**
 * The admin command line: `npm run cli -- <command>`. Configuration from the environment, as the
 * server (README): DATABASE_URL, or the embedded database in DATA_DIR. The embedded database can
 * be opened by one process at a time, so against it the server must be stopped first. A command
 * reads the configuration as the server does, and a failure the server reports in one line (a bad
 * variable, a malformed AGENT_PLATFORM_SECRET_KEY, a data directory in use) is that same line.
 *
 *   migrate                                      apply pending migrations, print them
 *   create-user --email <e> [--key-name <n>]     a new user and a personal API key (token printed once)
 *   create-api-key --email <e> --name <n>        a new personal API key for an existing user
 */
import { CliError, Command, Flag } from "effect/cli"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Console, Effect, Layer, Option, References, type Schema } from "effect"
import { NotFound } from "./domain/shared/Errors.ts"
import { ResourceName } from "./domain/shared/ResourceName.ts"
import { Email } from "./domain/tenancy/Users.ts"
import { AppConfig } from "./layers/AppConfig.ts"
import { DatabaseReadyLive } from "./layers/AppLive.ts"
import { DatabaseLive } from "./layers/Database.ts"
import { runMigrations } from "./layers/Migrations.ts"
import { configuredSecretKey } from "./layers/SecretKey.ts"
import { startupProblem } from "./layers/Startup.ts"
import { decodedWith } from "./process/DecodedFlag.ts"
import { runMain } from "./process/RunMain.ts"
import { ApiKeys } from "./services/tenancy/ApiKeys.ts"
import { Users } from "./services/tenancy/Users.ts"

const DEFAULT_KEY_NAME = "cli"

/** A `--name <text>` option decoded with a domain schema, so the CLI accepts exactly what the API accepts. */
const validatedText = <A>(name: string, description: string, schema: Schema.Codec<A, string>, fallback?: string) => {
  const text = Flag.String(name).pipe(Flag.withDescription(description))
  return decodedWith(name, schema)(fallback === undefined ? text : Flag.withDefault(text, fallback))
}

const email = validatedText("email", "the user's e-mail address", Email)

/**
 * The server's configuration, for every command (not for --help): read, and refused, as the
 * server does, AGENT_PLATFORM_SECRET_KEY included although no command uses the key.
 */
const ServerConfigurationLive = Layer.effectDiscard(configuredSecretKey).pipe(Layer.provideMerge(AppConfig.fromEnv))

const UsersLive = Layer.mergeAll(Users.layer, ApiKeys.layer).pipe(Layer.provide(DatabaseReadyLive))

const printKey = (key: { readonly id: string; readonly name: string; readonly token: string }) =>
  Console.log(
    [
      `api key  ${key.id} (${key.name})`,
      `token    ${key.token}`,
      "The token is shown only this once: store it now."
    ].join("\n")
  )

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    const applied = yield* runMigrations
    yield* Console.log(
      applied.length === 0
        ? "The database is up to date: no migration to apply."
        : applied.map(([id, name]) => `applied ${String(id).padStart(4, "0")} ${name}`).join("\n")
    )
  }).pipe(Effect.provide(DatabaseLive))).pipe(Command.withDescription("Apply pending database migrations"))

const createUser = Command.make("create-user", {
  email,
  keyName: validatedText("key-name", "the name of the personal API key", ResourceName, DEFAULT_KEY_NAME)
}, ({ email, keyName }) =>
  Effect.gen(function*() {
    const user = yield* Effect.flatMap(Users, (users) => users.create(email))
    const key = yield* Effect.flatMap(ApiKeys, (apiKeys) => apiKeys.createPersonal(user.id, keyName))
    yield* Console.log(`user     ${user.id} <${user.email}>`)
    yield* printKey(key)
  }).pipe(Effect.provide(UsersLive))).pipe(
    Command.withDescription("Create a user and print a new personal API key for it")
  )

const createApiKey = Command.make("create-api-key", {
  email,
  name: validatedText("name", "the name of the API key", ResourceName)
}, ({ email, name }) =>
  Effect.gen(function*() {
    const user = yield* Effect.flatMap(Users, (users) => users.findByEmail(email)).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new NotFound({ error: `No user has the e-mail ${email}; create it with create-user` })),
        onSome: Effect.succeed
      }))
    )
    const key = yield* Effect.flatMap(ApiKeys, (apiKeys) => apiKeys.createPersonal(user.id, name))
    yield* Console.log(`user     ${user.id} <${user.email}>`)
    yield* printKey(key)
  }).pipe(Effect.provide(UsersLive))).pipe(
    Command.withDescription("Create a new personal API key for an existing user and print it")
  )

const cli = Command.make("agent-platform").pipe(
  Command.withDescription("Administration of the agent platform server"),
  Command.withSubcommands([migrate, createUser, createApiKey]),
  Command.provide(ServerConfigurationLive),
  Command.run({ version: "0.1.0" })
)

/**
 * What a failure says to the operator: our errors carry `error` or `message` (with the message of
 * their cause, such as the connection error under "Failed to connect"); anything else is a bug,
 * shown in full.
 */
const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value as { readonly error?: unknown; readonly message?: unknown; readonly cause?: unknown }
    const message = typeof error.error === "string" ? error.error : error.message
    if (typeof message === "string" && message !== "") {
      return error.cause instanceof Error && error.cause.message !== "" ? `${message}: ${error.cause.message}` : message
    }
  }
  return Cause.pretty(cause)
}

cli.pipe(
  Effect.tapCause((cause) =>
    // effect/cli has already printed its usage errors, with the help text.
    Option.exists(Cause.findErrorOption(cause), CliError.isCliError) || Cause.hasInterruptsOnly(cause)
      ? Effect.void
      : Console.error(startupProblem(cause) ?? `error: ${describeFailure(cause)}`)
  ),
  Effect.provide(Layer.merge(NodeServices.layer, Layer.succeed(References.MinimumLogLevel, "Warn"))),
  runMain({ disableErrorReporting: true })
)
