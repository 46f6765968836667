/**
 * The HTTP server: the Api with its handlers, the OpenAPI document at /v1/openapi.json, the
 * Scalar docs page at /docs, the request guards that keep bad input off the 500 path, and one
 * structured log line per request.
 */
import {
  HttpApiBuilder,
  HttpApiError,
  HttpApiScalar,
  HttpApp,
  HttpMiddleware,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import { randomUUID } from "node:crypto"
import { Api } from "../api/Api.ts"
import { ActorsLive } from "../api/handlers/runtime/ActorsLive.ts"
import { AgentConfigsLive } from "../api/handlers/configuration/AgentConfigsLive.ts"
import { AgentsLive } from "../api/handlers/runtime/AgentsLive.ts"
import { AuthenticationLive } from "../api/handlers/AuthenticationLive.ts"
import { HealthLive } from "../api/handlers/HealthLive.ts"
import { InteractionsLive } from "../api/handlers/runtime/InteractionsLive.ts"
import { InvitationsLive } from "../api/handlers/tenancy/InvitationsLive.ts"
import { MembersLive } from "../api/handlers/tenancy/MembersLive.ts"
import { ModelProviderConfigsLive } from "../api/handlers/configuration/ModelProviderConfigsLive.ts"
import { ModelsLive } from "../api/handlers/configuration/ModelsLive.ts"
import { OrganizationApiKeysLive } from "../api/handlers/tenancy/OrganizationApiKeysLive.ts"
import { OrganizationsLive } from "../api/handlers/tenancy/OrganizationsLive.ts"
import { ProjectMembersLive } from "../api/handlers/tenancy/ProjectMembersLive.ts"
import { ProjectsLive } from "../api/handlers/tenancy/ProjectsLive.ts"
import { SecretsLive } from "../api/handlers/configuration/SecretsLive.ts"
import { SkillsLive } from "../api/handlers/configuration/SkillsLive.ts"
import { ToolCallsLive } from "../api/handlers/runtime/ToolCallsLive.ts"
import { UserLive } from "../api/handlers/tenancy/UserLive.ts"
import * as Errors from "../domain/shared/Errors.ts"
import { MAX_MEDIA_REQUEST_BODY_BYTES } from "../domain/runtime/Limits.ts"
import { AppConfig } from "./AppConfig.ts"

/** Request bodies larger than this are refused with 413 `request_too_large`, unless their route allows more. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024

/** Routes that accept larger bodies (inline media, spec 8): `[method, path pattern, limit]`. */
const ROUTE_BODY_LIMITS: ReadonlyArray<readonly [string, RegExp, number]> = [
  ["POST", /^\/v1\/orgs\/[^/]+\/projects\/[^/]+\/agents$/, MAX_MEDIA_REQUEST_BODY_BYTES],
  ["POST", /^\/v1\/orgs\/[^/]+\/projects\/[^/]+\/agents\/[^/]+\/inputs$/, MAX_MEDIA_REQUEST_BODY_BYTES],
  [
    "POST",
    /^\/v1\/orgs\/[^/]+\/projects\/[^/]+\/agents\/[^/]+\/tool-calls\/[^/]+\/result$/,
    MAX_MEDIA_REQUEST_BODY_BYTES
  ]
]

/** The body limit of a request's route (its path under /v1). */
const bodyLimitOf = (request: HttpServerRequest.HttpServerRequest): number => {
  const path = request.url.split("?")[0]
  return ROUTE_BODY_LIMITS.find(([method, pattern]) => method === request.method && pattern.test(path))?.[2] ??
    DEFAULT_BODY_LIMIT_BYTES
}

const SELF_HOSTED_PREFIX = "/api/v1"
const API_PREFIX = "/v1"

/** The tags of our error classes (a TaggedError's identifier is its tag). */
const API_ERROR_TAGS: ReadonlySet<string> = new Set(
  Object.values(Errors).flatMap((value) => "Wire" in value ? [value.identifier] : [])
)

const isApiError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && API_ERROR_TAGS.has((error as { _tag?: string })._tag ?? "")

/** The errors the guards raise themselves; an endpoint's own errors pass through them untouched. */
type GuardError =
  | Errors.InvalidRequest
  | Errors.NotFound
  | Errors.RequestTooLarge
  | Errors.UnsupportedMediaType
  | Errors.InternalError

/** `["model", 0, "name"]` as a JSON pointer: `/model/0/name`. */
const toPointer = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key) => "/" + String(key).replaceAll("~", "~0").replaceAll("/", "~1")).join("")

/** One issue per field: the first problem found at each path (an optional field also reports "Expected undefined"). */
const invalidRequest = (error: HttpApiError.HttpApiDecodeError) => {
  const byPath = new Map<string, string>()
  for (const issue of error.issues) {
    const path = toPointer(issue.path)
    if (!byPath.has(path)) byPath.set(path, issue.message)
  }
  const issues = Array.from(byPath, ([path, message]) => ({ path, message }))
  return new Errors.InvalidRequest({
    error: "The request does not match the API: " +
      issues.map((issue) => `${issue.path || "body"}: ${issue.message}`).join("; "),
    issues
  })
}

/**
 * Maps what can escape a handler onto the error model: our errors pass through, request
 * decoding problems become `invalid_request`, an unknown route `not_found`, an oversized body
 * `request_too_large`; anything else is a bug, logged in full and answered with a bare 500.
 */
const toApiError = (cause: Cause.Cause<unknown>): Effect.Effect<never, GuardError> => {
  // An interruption, or an error an endpoint declares (encoded by the Api with its own status).
  const passThrough = Effect.failCause(cause as Cause.Cause<never>)
  if (Cause.isInterruptedOnly(cause)) return passThrough
  const error = Cause.squash(cause)
  if (isApiError(error)) return passThrough
  if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.fail(invalidRequest(error))
  if (error instanceof HttpServerError.RouteNotFound) {
    return Effect.fail(new Errors.NotFound({ error: `No route ${error.request.method} ${error.request.url}` }))
  }
  if (error instanceof HttpServerError.RequestError && error.reason === "Decode") {
    return Effect.fail(
      error.cause instanceof Error && error.cause.message === "maxBytes exceeded"
        ? new Errors.RequestTooLarge({ error: `The request body is larger than this route accepts` })
        : new Errors.InvalidRequest({ error: "The request body is not valid JSON" })
    )
  }
  return Effect.zipRight(
    Effect.logError("unhandled failure", cause),
    Effect.fail(new Errors.InternalError({ error: "Internal error; it has been logged" }))
  )
}

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["transfer-encoding"] !== undefined ||
  (request.headers["content-length"] !== undefined && request.headers["content-length"] !== "0")

/**
 * Whether JSON text holds a `\u0000` escape (an escape preceded by an even number of
 * backslashes). Postgres text and jsonb cannot store NUL, so such a string would fail deep in a
 * write; it is refused up front, once for every route. (A raw NUL byte is not valid JSON at all.)
 */
const NUL_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u0000/
const containsNulEscape = (json: string): boolean => json.includes("u0000") && NUL_ESCAPE.test(json)

/**
 * Before a route runs: serve `/api/v1/...` as `/v1/...`, refuse bodies that are not JSON (415)
 * or too large for their route (413, from Content-Length before anything is read, and from the
 * stream for a body without one).
 */
const RequestGuards = HttpApiBuilder.middleware(Api, (app) =>
  Effect.gen(function*() {
    const original = yield* HttpServerRequest.HttpServerRequest
    const request = original.url.startsWith(SELF_HOSTED_PREFIX + "/")
      ? original.modify({ url: API_PREFIX + original.url.slice(SELF_HOSTED_PREFIX.length) })
      : original
    const bodyLimit = bodyLimitOf(request)
    if (hasBody(request)) {
      const contentType = (request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase()
      if (contentType !== "application/json") {
        return yield* Effect.fail(
          new Errors.UnsupportedMediaType({
            error: `Send the body as application/json${contentType ? `, not ${contentType}` : ""}`
          })
        )
      }
      const length = Number(request.headers["content-length"] ?? 0)
      if (length > bodyLimit) {
        return yield* Effect.fail(
          new Errors.RequestTooLarge({
            error: `The request body is ${length} bytes; this route accepts at most ${bodyLimit}`
          })
        )
      }
    }
    const refuseNulCharacters = Effect.gen(function*() {
      if (hasBody(request) && containsNulEscape(yield* request.text)) {
        return yield* Effect.fail(
          new Errors.InvalidRequest({
            error: "The body contains a NUL character (\\u0000) in a string; text cannot hold it. " +
              "Remove it, or send binary data as base64"
          })
        )
      }
    })
    return yield* Effect.zipRight(refuseNulCharacters, app).pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request),
      HttpServerRequest.withMaxBodySize(Option.some(bodyLimit))
    )
  }).pipe(Effect.catchAllCause(toApiError)))

/**
 * Every request gets an `x-request-id` (the caller's, or a new one) and one log line. Its work
 * runs with the tracer off: nothing exports spans, and one per SQL statement costs throughput.
 */
const requestLog = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = request.headers["x-request-id"] || randomUUID()
    const started = performance.now()
    // The response is written before a middleware sees it: headers go in through a pre-response handler.
    yield* HttpApp.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", requestId))
    )
    const response = yield* app.pipe(
      Effect.catchAllCause((cause) => Effect.map(HttpServerError.causeResponse(cause), ([response]) => response)),
      Effect.withTracerEnabled(false)
    )
    yield* Effect.logInfo("request").pipe(
      Effect.annotateLogs({
        request_id: requestId,
        method: request.method,
        path: request.url.split("?")[0],
        status: response.status,
        duration_ms: Math.round((performance.now() - started) * 10) / 10
      })
    )
    return response
  })
)

const HandlersLive = Layer.mergeAll(
  HealthLive,
  UserLive,
  OrganizationsLive,
  OrganizationApiKeysLive,
  MembersLive,
  InvitationsLive,
  ProjectsLive,
  ProjectMembersLive,
  SecretsLive,
  ModelProviderConfigsLive,
  ModelsLive,
  SkillsLive,
  AgentConfigsLive,
  AgentsLive,
  ToolCallsLive,
  InteractionsLive,
  ActorsLive
).pipe(Layer.provide(AuthenticationLive))

/** The Api with its routes, docs and guards; needs an HttpServer and the services. */
export const HttpAppLive = HttpApiBuilder.serve(requestLog).pipe(
  Layer.provide(HttpApiScalar.layer({ path: "/docs" })),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/v1/openapi.json" })),
  Layer.provide(RequestGuards),
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(HandlersLive))),
  // Request spans cost a third of the throughput (EFFECT-NOTES.md 5) and nothing exports them.
  HttpMiddleware.withTracerDisabledWhen(() => true)
)

/** How long shutdown waits for in-flight requests before closing their connections. */
export const SHUTDOWN_GRACE_MS = 10_000

/**
 * A node:http server whose `close` (shutdown) also closes keep-alive connections as soon as they
 * are idle, instead of when they time out, and after SHUTDOWN_GRACE_MS every connection left.
 */
const createDrainingServer = () => {
  const server = createServer()
  const close = server.close.bind(server)
  server.close = ((callback?: (error?: Error) => void) => {
    const closeIdle = setInterval(() => server.closeIdleConnections(), 50)
    const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS)
    return close((error) => {
      clearInterval(closeIdle)
      clearTimeout(deadline)
      callback?.(error)
    })
  }) as typeof server.close
  return server
}

/** Listening on HOST:PORT. */
export const NodeServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => NodeHttpServer.layer(createDrainingServer, { host: config.host, port: config.port }))
)

