/**
 * Configuration from the environment (ARCHITECTURE.md 6). Read once at start-up.
 */
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"

export interface AppConfigShape {
  /** A real Postgres; when absent the embedded PGlite database in `dataDir` is used. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** Where the embedded database lives; "memory://" keeps it in memory (tests). */
  readonly dataDir: string
  readonly host: string
  readonly port: number
  /** At start, make sure an admin user exists whose personal API key is this token. */
  readonly bootstrapToken: Option.Option<Redacted.Redacted>
  readonly bootstrapEmail: string
  /**
   * AGENT_PLATFORM_SECRET_KEY: 32 bytes as 64 hex characters or as base64, the key of secrets at
   * rest (and of machine tokens). Unset: generated once into `dataDir/secret.key` (src/layers/SecretKey.ts).
   */
  readonly secretKey: Option.Option<Redacted.Redacted>
}

export class AppConfig extends Context.Tag("AppConfig")<AppConfig, AppConfigShape>() {
  static readonly fromEnv = Layer.effect(
    AppConfig,
    Effect.gen(function*() {
      return {
        databaseUrl: yield* Config.option(Config.redacted("DATABASE_URL")),
        dataDir: yield* Config.withDefault(Config.string("DATA_DIR"), "./.data"),
        host: yield* Config.withDefault(Config.string("HOST"), "127.0.0.1"),
        port: yield* Config.withDefault(Config.port("PORT"), 8787),
        bootstrapToken: yield* Config.option(Config.redacted("AGENT_PLATFORM_BOOTSTRAP_TOKEN")),
        bootstrapEmail: yield* Config.withDefault(Config.string("AGENT_PLATFORM_BOOTSTRAP_EMAIL"), "admin@localhost"),
        secretKey: yield* Config.option(Config.redacted("AGENT_PLATFORM_SECRET_KEY"))
      }
    })
  )
}
