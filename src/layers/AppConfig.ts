/**
 * Configuration from the environment (README, docs/operations.md). Read once at start-up. A
 * variable set to an empty string (`DATABASE_URL=` in a .env file) counts as unset.
 */
import { Config, Context, Duration, Effect, Layer, Option, Redacted, Result, Schema, SchemaIssue } from "effect"
import { MAX_MODEL_CALLS_PER_TURN } from "../services/runtime/TurnLimits.ts"

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
  /** Browser origins allowed to call the API (CORS), e.g. `https://app.example.com`; none by default. */
  readonly corsOrigins: ReadonlyArray<string>
  /**
   * AGENT_PLATFORM_BLOCK_PRIVATE_NETWORKS=true (the hosted profile): model provider base URLs, MCP
   * and webhook URLs may not point at private, loopback or link-local addresses
   * (services/shared/NetworkPolicy.ts). Off by default: the embedded setup calls local providers.
   */
  readonly blockPrivateNetworks: boolean
  /**
   * AGENT_PLATFORM_LOCAL_PROVIDER_KEY: the key a `local` machine pool's auth secret must hold,
   * since that provider runs code on this host (docs/machine-pools.md). Unset: `local` pools are refused.
   */
  readonly localProviderKey: Option.Option<Redacted.Redacted>
  /**
   * AGENT_PLATFORM_CLUSTER_POOLS_FILE: a JSON file of the machine pools the operator declares
   * (`management_kind: cluster`), installed at start-up (docs/machine-pools.md). Unset: none.
   */
  readonly clusterPoolsFile: Option.Option<string>
  /**
   * AGENT_PLATFORM_SERVER_URL: the address the daemons of pool machines reach this server at.
   * Unset: the listener's own address (a wildcard host read as 127.0.0.1).
   */
  readonly serverUrl: Option.Option<string>
  /**
   * AGENT_PLATFORM_POOL_ADMISSION_WAIT_SECONDS (default 60): how long a built-in call waits for a
   * pool to admit it to a machine before it fails with `managed_work_admission_denied`.
   */
  readonly poolAdmissionWaitSeconds: number
  /**
   * AGENT_PLATFORM_POOL_MINUTE_SECONDS (default 60): how many seconds make one minute of
   * `delete_after_idle_minutes`. Only tests and demonstrations shorten it.
   */
  readonly poolMinuteSeconds: number
  /**
   * AGENT_PLATFORM_MACHINE_OFFLINE_WAIT_SECONDS (default 60): how long a request to a machine that
   * is offline (or still provisioning) waits for its daemon before it fails (docs/machines.md).
   */
  readonly machineOfflineWaitSeconds: number
  /**
   * AGENT_PLATFORM_MAX_TURN_STEPS (default 500, MAX_MODEL_CALLS_PER_TURN): the most model calls
   * one turn makes; past it the turn fails, saying to send a new input to continue (docs/runtime.md,
   * "Limits of a turn").
   */
  readonly maxTurnSteps: number
  /**
   * AGENT_PLATFORM_MODEL_HEAD_TIMEOUT_SECONDS (default 300): how long a model call waits for the
   * head of the provider's answer (its status and headers) before it closes the connection; a
   * transient failure, retried like a dropped connection (docs/model-adapters.md, "Bounds").
   */
  readonly modelHeadTimeout: Duration.Duration
  /**
   * AGENT_PLATFORM_MODEL_IDLE_TIMEOUT_SECONDS (default 300): how long the body of a provider's
   * answer may send nothing before the call closes the connection and fails.
   */
  readonly modelIdleTimeout: Duration.Duration
  /**
   * AGENT_PLATFORM_MODEL_CALL_TIMEOUT_SECONDS (default 3600): how long one model call may take in
   * all (its attempts and the whole streamed answer) before it is stopped and fails.
   */
  readonly modelCallTimeout: Duration.Duration
  /**
   * AGENT_PLATFORM_RATE_LIMIT_PER_SECOND (default 100; 0 turns the limit off) and
   * AGENT_PLATFORM_RATE_LIMIT_BURST (default ten seconds' worth): how fast one API key may call
   * (services/tenancy/KeyRateLimits.ts, docs/api-conventions.md "Rate limits"). None: no limit.
   */
  readonly keyRate: Option.Option<KeyRate>
  /**
   * AGENT_PLATFORM_MAX_STREAMS_PER_KEY (default 1000; 0 turns the cap off): how many event
   * streams one API key may hold open at once in this process (services/runtime/StreamAccess.ts,
   * docs/api-conventions.md "Rate limits"). None: no cap.
   */
  readonly maxStreamsPerKey: Option.Option<number>
}

/** The rate of one API key: `perSecond` requests a second on average, `burst` at most at once. */
export interface KeyRate {
  readonly perSecond: number
  readonly burst: number
}

/** A key's default rate, and the seconds of it a burst holds when only the rate is set. */
const DEFAULT_KEY_REQUESTS_PER_SECOND = 100
const KEY_BURST_SECONDS = 10
export const DEFAULT_KEY_RATE: KeyRate = {
  perSecond: DEFAULT_KEY_REQUESTS_PER_SECOND,
  burst: DEFAULT_KEY_REQUESTS_PER_SECOND * KEY_BURST_SECONDS
}

/** The event streams one API key may hold open at once in a process, unless set otherwise. */
export const DEFAULT_MAX_STREAMS_PER_KEY = 1000

/** The defaults of the model calls' timeouts (docs/model-adapters.md, "Bounds"). */
export const DEFAULT_MODEL_HEAD_TIMEOUT = Duration.minutes(5)
export const DEFAULT_MODEL_IDLE_TIMEOUT = Duration.minutes(5)
export const DEFAULT_MODEL_CALL_TIMEOUT = Duration.minutes(60)

/** The variable `name` read with `config`, an empty (or blank) value counting as unset. */
const optional = <A>(config: (name: string) => Config.Config<A>, name: string) =>
  Effect.flatMap(
    Config.option(Config.String(name)),
    (raw): Effect.Effect<Option.Option<A>, Config.ConfigError> =>
      Option.isSome(raw) && raw.value.trim() !== "" ? Effect.map(config(name), Option.some) : Effect.succeed(Option.none())
  )

/** A refused value of the variable `name`: what the start-up prints as `(Invalid data at NAME: "message")` (Startup.ts). */
export const invalidData = (name: string, message: string) =>
  new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.Pointer([name], new SchemaIssue.InvalidValue({ message }))))

/**
 * The variable `name` as text, made a value by `parse`, or refused with the message it returns:
 * the values and messages of Effect 3's `Config.port`, `integer`, `boolean` and `url`, which the
 * server has always printed.
 */
const parsed = <A>(parse: (text: string) => Result.Result<A, string>) => (name: string): Config.Config<A> =>
  Config.String(name).pipe(
    Config.mapEffect((text) =>
      Result.match(parse(text), {
        onSuccess: Effect.succeed,
        onFailure: (message) => Effect.fail(invalidData(name, message))
      })
    )
  )

const expected = (what: string, text: string) => Result.fail(`Expected ${what} value but received ${JSON.stringify(text)}`)

const port = parsed((text) => {
  const value = Number(text)
  return Number.isInteger(value) && value.toString() === text && value >= 1 && value <= 65_535
    ? Result.succeed(value)
    : expected("a network port", text)
})

export const integer = parsed((text) => {
  const value = Number(text)
  return Number.isInteger(value) ? Result.succeed(value) : expected("an integer", text)
})

const nonNegativeInteger = parsed((text) => {
  const value = Number(text)
  return Number.isInteger(value) && value >= 0 ? Result.succeed(value) : expected("an integer of 0 or more", text)
})

const positiveInteger = parsed((text) => {
  const value = Number(text)
  return Number.isInteger(value) && value >= 1 ? Result.succeed(value) : expected("a positive integer", text)
})

const boolean = parsed((text) => {
  switch (text) {
    case "true":
    case "yes":
    case "on":
    case "1":
      return Result.succeed(true)
    case "false":
    case "no":
    case "off":
    case "0":
      return Result.succeed(false)
    default:
      return expected("a boolean", text)
  }
})

/** A number of seconds above 0, fractions allowed (tests shorten timeouts below a second). */
const seconds = parsed((text) => {
  const value = Number(text)
  return text.trim() !== "" && Number.isFinite(value) && value > 0
    ? Result.succeed(Duration.millis(Math.round(value * 1000)))
    : expected("a number of seconds above 0", text)
})

const url = parsed((text) => URL.canParse(text) ? Result.succeed(new URL(text)) : expected("an URL", text))

/**
 * DATABASE_URL: a `postgres://` (or `postgresql://`) URL. Anything else the driver would read as
 * best it can (`garbage` became a connection to a host named "base"): refused here, without the
 * value (it may hold a password).
 */
const postgresUrl = parsed((text) =>
  URL.canParse(text) && /^postgres(ql)?:$/.test(new URL(text).protocol)
    ? Result.succeed(Redacted.make(text))
    : Result.fail("must be a URL such as postgres://user:password@host:5432/database")
)

/** The comma-separated origins of AGENT_PLATFORM_CORS_ORIGINS, without blanks or a trailing slash. */
const parseOrigins = (text: string): ReadonlyArray<string> =>
  text.split(",").map((origin) => origin.trim().replace(/\/+$/, "")).filter((origin) => origin !== "")

/** A key's rate from its two variables: a rate of 0 is no limit; a burst unset is ten seconds of the rate. */
const keyRate = Effect.gen(function*() {
  const perSecond = Option.getOrElse(
    yield* optional(nonNegativeInteger, "AGENT_PLATFORM_RATE_LIMIT_PER_SECOND"),
    () => DEFAULT_KEY_REQUESTS_PER_SECOND
  )
  const burst = yield* optional(positiveInteger, "AGENT_PLATFORM_RATE_LIMIT_BURST")
  return perSecond === 0
    ? Option.none<KeyRate>()
    : Option.some<KeyRate>({ perSecond, burst: Option.getOrElse(burst, () => perSecond * KEY_BURST_SECONDS) })
})

/** The cap on a key's open event streams: unset is the default, 0 is no cap. */
const maxStreamsPerKey = Effect.map(
  optional(nonNegativeInteger, "AGENT_PLATFORM_MAX_STREAMS_PER_KEY"),
  (set) => Option.filter(Option.orElseSome(set, () => DEFAULT_MAX_STREAMS_PER_KEY), (cap) => cap > 0)
)

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("AppConfig") {
  static readonly fromEnv = Layer.effect(
    AppConfig,
    Effect.gen(function*() {
      return {
        databaseUrl: yield* optional(postgresUrl, "DATABASE_URL"),
        dataDir: Option.getOrElse(yield* optional(Config.String, "DATA_DIR"), () => "./.data"),
        host: Option.getOrElse(yield* optional(Config.String, "HOST"), () => "127.0.0.1"),
        port: Option.getOrElse(yield* optional(port, "PORT"), () => 8787),
        bootstrapToken: yield* optional((name) => Config.Redacted(name), "AGENT_PLATFORM_BOOTSTRAP_TOKEN"),
        bootstrapEmail: Option.getOrElse(
          yield* optional(Config.String, "AGENT_PLATFORM_BOOTSTRAP_EMAIL"),
          () => "admin@localhost"
        ),
        secretKey: yield* optional((name) => Config.Redacted(name), "AGENT_PLATFORM_SECRET_KEY"),
        corsOrigins: Option.match(yield* optional(Config.String, "AGENT_PLATFORM_CORS_ORIGINS"), {
          onNone: () => [],
          onSome: parseOrigins
        }),
        blockPrivateNetworks: Option.getOrElse(
          yield* optional(boolean, "AGENT_PLATFORM_BLOCK_PRIVATE_NETWORKS"),
          () => false
        ),
        localProviderKey: yield* optional((name) => Config.Redacted(name), "AGENT_PLATFORM_LOCAL_PROVIDER_KEY"),
        clusterPoolsFile: yield* optional(Config.String, "AGENT_PLATFORM_CLUSTER_POOLS_FILE"),
        serverUrl: Option.map(yield* optional(url, "AGENT_PLATFORM_SERVER_URL"), (url) => url.toString().replace(/\/+$/, "")),
        poolAdmissionWaitSeconds: Option.getOrElse(
          yield* optional(nonNegativeInteger, "AGENT_PLATFORM_POOL_ADMISSION_WAIT_SECONDS"),
          () => 60
        ),
        poolMinuteSeconds: Option.getOrElse(yield* optional(positiveInteger, "AGENT_PLATFORM_POOL_MINUTE_SECONDS"), () => 60),
        machineOfflineWaitSeconds: Option.getOrElse(
          yield* optional(positiveInteger, "AGENT_PLATFORM_MACHINE_OFFLINE_WAIT_SECONDS"),
          () => 60
        ),
        maxTurnSteps: Option.getOrElse(
          yield* optional(positiveInteger, "AGENT_PLATFORM_MAX_TURN_STEPS"),
          () => MAX_MODEL_CALLS_PER_TURN
        ),
        modelHeadTimeout: Option.getOrElse(
          yield* optional(seconds, "AGENT_PLATFORM_MODEL_HEAD_TIMEOUT_SECONDS"),
          () => DEFAULT_MODEL_HEAD_TIMEOUT
        ),
        modelIdleTimeout: Option.getOrElse(
          yield* optional(seconds, "AGENT_PLATFORM_MODEL_IDLE_TIMEOUT_SECONDS"),
          () => DEFAULT_MODEL_IDLE_TIMEOUT
        ),
        modelCallTimeout: Option.getOrElse(
          yield* optional(seconds, "AGENT_PLATFORM_MODEL_CALL_TIMEOUT_SECONDS"),
          () => DEFAULT_MODEL_CALL_TIMEOUT
        ),
        keyRate: yield* keyRate,
        maxStreamsPerKey: yield* maxStreamsPerKey
      }
    })
  )
}
