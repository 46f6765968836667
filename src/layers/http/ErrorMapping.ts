/**
 * What can escape a route, mapped onto the error model: our errors pass through (the Api encodes
 * them with their status), a body the scanner refused answers the scanner's error, a decode
 * failure is explained in the caller's words, an unknown route is `not_found` (answered by
 * `routeNotFoundResponse`, which names the methods the path takes), a foreign key that
 * refused a write is a lost race with another request (`not_found` or `conflict`), a database
 * failure that a retry may not meet (a deadlock, a lost connection) is `service_unavailable`.
 * Anything else is a bug: logged in full with the request id, answered with a bare `500
 * internal_error`.
 */
import { HttpApiError } from "effect/http-api"
import { HttpServerError, type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { SqlError } from "effect/sql"
import { Cause, Effect, Schema, SchemaAST as AST } from "effect"
import * as Errors from "../../domain/shared/Errors.ts"
import { SessionMachineOffline, SessionMachineTimeout, SessionRefused } from "../../domain/workspaces/Workspaces.ts"
import { foreignKeyViolation, type ForeignKeyViolation, isSqlError } from "../../services/shared/Sql.ts"

/** The wire schema of each of our error classes, by tag (a TaggedError's identifier is its tag). */
const WIRES: ReadonlyMap<string, Schema.Top> = new Map(
  [...Object.values(Errors), SessionMachineOffline, SessionRefused, SessionMachineTimeout].flatMap((value) =>
    "Wire" in value ? [[value.identifier, value.Wire as Schema.Top] as const] : []
  )
)

/** The tags of our error classes. */
const API_ERROR_TAGS: ReadonlySet<string> = new Set(WIRES.keys())

/** The HTTP status a wire schema is annotated with (HttpApiSchema.status). */
const statusOf = (wire: Schema.Top): number =>
  AST.resolveAt<number>("httpApiStatus")(wire.ast) ?? (wire.ast.context?.annotations?.httpApiStatus as number | undefined) ?? 500

/**
 * One of our errors as the Api answers it (`{ error, code, ...extra }` with its status), for the
 * failures the Api does not see: a request refused from its headers, a route that is not there,
 * a route outside the Api.
 */
export const errorResponse = (error: { readonly _tag: string }): HttpServerResponse.HttpServerResponse => {
  const wire = WIRES.get(error._tag)!
  return HttpServerResponse.jsonUnsafe(Schema.encodeUnknownSync(wire as Schema.Codec<unknown, unknown>)(error), {
    status: statusOf(wire)
  })
}

/** The errors declared at the Api level, the only ones an Api middleware's type may fail with. */
export type ApiLevelError =
  | Errors.InvalidRequest
  | Errors.NotFound
  | Errors.RequestTimeout
  | Errors.RequestTooLarge
  | Errors.UnsupportedMediaType
  | Errors.InternalError
  | Errors.ServiceUnavailable

/**
 * Any of our errors as an Api-level one: the Api encodes every error an endpoint or group
 * declares (its error schema is the union of them all), such as a route's 409 or the guards'
 * 401; the middleware's type only knows the Api-level ones.
 */
const asApiLevel = (error: { readonly _tag: string }): ApiLevelError => error as ApiLevelError

const isApiError = (error: unknown): error is { readonly _tag: string } =>
  typeof error === "object" && error !== null && API_ERROR_TAGS.has((error as { _tag?: string })._tag ?? "")

const internalError = (cause: Cause.Cause<unknown>) =>
  Effect.andThen(
    Effect.logError("unhandled failure", cause),
    Effect.fail(new Errors.InternalError({ error: "Internal error; it has been logged" }))
  )

/**
 * A foreign key refused a write that no service turned into an error of its own: the request
 * lost a race with another, which deleted a row this one refers to between the service's check
 * and its INSERT (a grant of a secret being deleted, an agent config naming a model being
 * deleted, a create in a project being deleted), or made a row refer to the one this request
 * deletes. Its statement changed nothing and its transaction has rolled back by now. The caller
 * gets what the same request sent a moment later would get: `not_found` for the first (the
 * sequential request finds the resource gone), `conflict` for the second (a delete refused while
 * something uses the resource). Logged with its cause at Warning, as a replaced failure the
 * platform did not expect: from here a lost race and a bug that wrote a dangling reference look
 * the same.
 */
const foreignKeyRace = (cause: Cause.Cause<unknown>, violation: ForeignKeyViolation) =>
  Effect.andThen(
    Effect.logWarning("ForeignKeyViolation replaced by the error the caller sees", cause),
    Effect.fail(asApiLevel(
      violation.side === "referencing"
        ? Errors.deletedMeanwhile()
        : new Errors.Conflict({
          error: "A resource this request deletes came to be referred to by another while the request was handled, " +
            "so it was not deleted; change or delete what refers to it first"
        })
    ))
  )

/** What the database did to a request that a retry may not meet, and what to do. */
const retryableFailureMessage = (reason: SqlError.SqlErrorReason) => {
  const cancelled = "The database cancelled this request's transaction, undoing its writes: "
  switch (reason._tag) {
    case "DeadlockError":
      return `${cancelled}it and another request's each waited for rows the other held (a deadlock). Send the request again`
    case "SerializationError":
      return `${cancelled}another request changed the same rows at the same moment. Send the request again`
    case "LockTimeoutError":
    case "StatementTimeoutError":
      return "The database gave up on a statement of this request, waiting too long for it. Send the request again"
    default:
      return "The database could not be reached (its connection failed). Send the request again in a moment"
  }
}

/**
 * The database failed the request for a reason another attempt may not meet (its client marks
 * them retryable): a deadlock or a serialization failure (it cancelled the transaction), a lock
 * or statement timeout, a connection that failed. `503 service_unavailable`, saying to send it
 * again, rather than a `500` that says nothing of the kind. Logged with its cause at Warning: a
 * deadlock here is a lock order the platform did not foresee.
 */
const retryableDatabaseFailure = (cause: Cause.Cause<unknown>, error: SqlError.SqlError) =>
  Effect.andThen(
    Effect.logWarning("a retryable database failure answered service_unavailable", cause),
    Effect.fail(new Errors.ServiceUnavailable({ error: retryableFailureMessage(error.reason) }))
  )

/**
 * `explainDecodeFailure` names the part of the request that failed its schema, or answers
 * undefined when none did (the failure came from inside the handler).
 */
export const toApiError = (
  cause: Cause.Cause<unknown>,
  explainDecodeFailure: (failure: HttpApiError.HttpApiSchemaError) => Errors.InvalidRequest | undefined
): Effect.Effect<never, ApiLevelError> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const error = Cause.squash(cause)
  if (isApiError(error)) return Effect.fail(asApiLevel(error))
  const violation = foreignKeyViolation(error)
  if (violation !== undefined) return foreignKeyRace(cause, violation)
  if (isSqlError(error) && error.isRetryable) return retryableDatabaseFailure(cause, error)
  if (HttpServerError.isHttpServerError(error)) {
    const reason = error.reason
    // A body refused by the scanner travels as the cause of the error of reading it.
    if (reason._tag === "RequestParseError") {
      if (isApiError(reason.cause)) return Effect.fail(asApiLevel(reason.cause))
      return Effect.fail(new Errors.InvalidRequest({ error: "The request body could not be read" }))
    }
  }
  if (HttpApiError.HttpApiSchemaError.is(error)) {
    const explained = explainDecodeFailure(error)
    return explained === undefined ? internalError(cause) : Effect.fail(explained)
  }
  return internalError(cause)
}

/** Whether `part` (a path, a query) decodes: each `%` followed by two hexadecimal digits, the bytes they make UTF-8. */
export const isPercentEncoded = (part: string): boolean => {
  try {
    decodeURIComponent(part)
    return true
  } catch {
    return false
  }
}

/** How to write a part of a URL that does not decode (`what`: "The path"). */
export const notPercentEncoded = (what: string) =>
  `${what} is not valid percent-encoding: write a % as %25, and encode other characters as ` +
  "%XX with two hexadecimal digits per byte of their UTF-8"

/** The request no route matched, when that is what `cause` is. */
export const unroutedRequest = (cause: Cause.Cause<unknown>): HttpServerRequest.HttpServerRequest | undefined => {
  const error = Cause.squash(cause)
  return HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound" ? error.reason.request : undefined
}

/**
 * No route matched: `not_found`, naming the path as the caller sent it (`/api/v1/...` is served as
 * `/v1/...`), and, when routes take other methods at that path (`methods`), naming them, in the
 * message and in an `Allow` header (the error codes have no 405; RFC 9110 allows `Allow` on any
 * answer). A path that cannot be decoded at all (`/v1/orgs/%ZZ`), which the router cannot match
 * either, is the caller's mistake, not a missing resource: `invalid_request`.
 */
export const routeNotFoundResponse = (
  request: { readonly method: string; readonly originalUrl: string },
  methods: ReadonlyArray<string>
): HttpServerResponse.HttpServerResponse => {
  // The original URL is absolute when the request named its host.
  const path = request.originalUrl.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").split("?")[0]
  if (!isPercentEncoded(path)) return errorResponse(new Errors.InvalidRequest({ error: notPercentEncoded("The path") }))
  if (methods.length === 0) return errorResponse(new Errors.NotFound({ error: `No route ${request.method} ${path}` }))
  const allowed = methods.join(", ")
  return HttpServerResponse.setHeader(
    errorResponse(new Errors.NotFound({ error: `No route ${request.method} ${path}; this path takes ${allowed}` })),
    "allow",
    allowed
  )
}
