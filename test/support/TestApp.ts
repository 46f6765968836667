/**
 * The real server layer over a real database, listening on a random loopback port, with an
 * HttpClient pointed at it. PGlite in memory by default; the Postgres at DATABASE_URL when set
 * (migrated once by test/support/globalSetup.ts). Each test makes its own users, organizations
 * and projects, so tests never depend on each other's data.
 */
import { HttpClient, HttpClientRequest, type HttpMethod } from "effect/http"
import { layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted, References } from "effect"
import { randomBytes } from "node:crypto"
import { makeClient } from "../../src/api/Client.ts"
import {
  AppConfig,
  type AppConfigShape,
  DEFAULT_KEY_RATE,
  DEFAULT_MAX_STREAMS_PER_KEY,
  DEFAULT_MODEL_CALL_TIMEOUT,
  DEFAULT_MODEL_HEAD_TIMEOUT,
  DEFAULT_MODEL_IDLE_TIMEOUT
} from "../../src/layers/AppConfig.ts"
import { AppLive, ServicesLive } from "../../src/layers/AppLive.ts"
import { NodeTestServerLive } from "../../src/layers/http/NodeServer.ts"
import type { IdSchema } from "../../src/domain/shared/Ids.ts"
import { IdGenerator } from "../../src/services/shared/Ids.ts"
import { MAX_MODEL_CALLS_PER_TURN } from "../../src/services/runtime/TurnLimits.ts"
import { ApiKeys } from "../../src/services/tenancy/ApiKeys.ts"
import { Users } from "../../src/services/tenancy/Users.ts"

/**
 * One secret key for every app of a test file: apps of a file share its database, and a server
 * refuses a key other than the one the database's secrets were encrypted with.
 */
const TEST_SECRET_KEY = Redacted.make(randomBytes(32).toString("base64"))

export const testConfig = (overrides: Partial<AppConfigShape> = {}) =>
  Layer.succeed(AppConfig, {
    databaseUrl: Option.map(Option.fromNullishOr(process.env.DATABASE_URL), Redacted.make),
    dataDir: "memory://",
    host: "127.0.0.1",
    port: 0,
    bootstrapToken: Option.none(),
    bootstrapEmail: "admin@localhost",
    secretKey: Option.some(TEST_SECRET_KEY),
    corsOrigins: [],
    blockPrivateNetworks: false,
    localProviderKey: Option.none(),
    clusterPoolsFile: Option.none(),
    serverUrl: Option.none(),
    poolAdmissionWaitSeconds: 60,
    poolMinuteSeconds: 60,
    machineOfflineWaitSeconds: 60,
    maxTurnSteps: MAX_MODEL_CALLS_PER_TURN,
    modelHeadTimeout: DEFAULT_MODEL_HEAD_TIMEOUT,
    modelIdleTimeout: DEFAULT_MODEL_IDLE_TIMEOUT,
    modelCallTimeout: DEFAULT_MODEL_CALL_TIMEOUT,
    keyRate: Option.some(DEFAULT_KEY_RATE),
    maxStreamsPerKey: Option.some(DEFAULT_MAX_STREAMS_PER_KEY),
    ...overrides
  })

/** The app and its services (for set-up that has no route, such as creating users). */
export const TestAppLive = (overrides: Partial<AppConfigShape> = {}) =>
  AppLive.pipe(
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(NodeTestServerLive),
    Layer.provide(testConfig(overrides)),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )

/**
 * A describe block over one app for its tests. The real clock, not the test clock: the workflow
 * engine's background fibers (polls, timers) must run.
 */
export const describeApp = (overrides: Partial<AppConfigShape> = {}) =>
  layer(TestAppLive(overrides), { timeout: "60 seconds", excludeTestServices: true })

export const uniqueEmail = (label = "user") => `${label}-${randomBytes(6).toString("hex")}@example.test`

/** A new user with a personal API key, and a typed client that sends it. */
export const newUser = (label = "user") =>
  Effect.gen(function*() {
    const user = yield* Effect.flatMap(Users, (users) => users.create(uniqueEmail(label)))
    const key = yield* Effect.flatMap(ApiKeys, (apiKeys) => apiKeys.createPersonal(user.id, "test"))
    const client = yield* makeClient({ token: key.token })
    return { user, token: key.token, client }
  }).pipe(Effect.orDie)

/** A new id of the kind `schema` describes, for requests about resources that do not exist. */
export const newId = <Id extends string>(schema: IdSchema<Id>) => Effect.flatMap(IdGenerator, (ids) => ids.make(schema))

/** A typed client that sends `token` (or none). */
export const clientWith = (token?: string) => makeClient(token === undefined ? {} : { token })

/** A raw request through the test HttpClient, for what the typed client cannot send. */
export const rawRequest = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.flatMap(HttpClient.HttpClient, (client) => client.execute(request)).pipe(
    Effect.flatMap((response) =>
      Effect.map(response.text, (text) => ({
        status: response.status,
        headers: response.headers,
        text,
        json: (response.headers["content-type"] ?? "").includes("json")
          ? JSON.parse(text) as Record<string, unknown>
          : undefined
      }))
    ),
    Effect.scoped
  )

/** A raw request as `user`, with a JSON body when there is one: for answers the typed client would not decode. */
export const sendAs = (user: TestUser, method: HttpMethod.HttpMethod, path: string, body?: unknown) =>
  rawRequest(
    HttpClientRequest.make(method)(path).pipe(
      HttpClientRequest.bearerToken(user.token),
      body === undefined ? (request) => request : HttpClientRequest.bodyJsonUnsafe(body)
    )
  )

/** Runs `effect` and returns its failure, failing the test when it succeeds. */
export const expectFailure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flip(effect).pipe(Effect.catch(() => Effect.die(new Error("expected a failure, got a success"))))

/**
 * Runs `effects` at once (on Postgres, over several connections) and gives each one's outcome
 * in order: `"succeeded"`, or its failure's tag.
 */
export const outcomesAtOnce = <E extends { readonly _tag: string }, R>(effects: ReadonlyArray<Effect.Effect<unknown, E, R>>) =>
  Effect.map(
    Effect.all(effects.map((effect) => Effect.result(effect)), { concurrency: "unbounded" }),
    (results) => results.map((result) => result._tag === "Success" ? "succeeded" : result.failure._tag)
  )

export type TestUser = Effect.Success<ReturnType<typeof newUser>>

export const ID_PATTERN = (prefix: string) => new RegExp(`^${prefix}_[a-z2-7]{26}$`)

/** `owner` invites `user` into the organization with `role`, and `user` accepts. */
export const joinOrganization = (
  owner: TestUser,
  orgID: Parameters<TestUser["client"]["organizations"]["get"]>[0]["params"]["orgID"],
  user: TestUser,
  role: "owner" | "admin" | "member"
) =>
  Effect.gen(function*() {
    const invitation = yield* owner.client.invitations.create({ params: { orgID }, payload: { email: user.user.email, role } })
    return yield* user.client.invitations.accept({ params: { invitationID: invitation.id } })
  })
