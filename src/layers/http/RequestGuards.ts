/**
 * Before a route runs, from the headers alone (nothing of the body is read here): serve
 * `/api/v1/...` as `/v1/...`; refuse a body that is not JSON (415) or declares more bytes than
 * the route accepts (413); refuse an Authorization header without the Bearer scheme (401) and
 * query parameters the endpoint does not declare (400). Then the route runs with a
 * GuardedRequest, whose body is read, scanned and limited only when the route asks for it, after
 * authentication. A response to a request whose body was not read to its end closes the
 * connection, so the rest of an unwanted body is never read. Failures are mapped by ErrorMapping.
 */
import { HttpApiBuilder, HttpApp, HttpMethod, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { IncomingMessage } from "node:http"
import { Api } from "../../api/Api.ts"
import * as Errors from "../../domain/shared/Errors.ts"
import { explainDecodeFailure } from "./DecodeFailures.ts"
import { asApiLevel, toApiError } from "./ErrorMapping.ts"
import { GuardedRequest } from "./GuardedRequest.ts"
import { JsonBody, mebibytes } from "./JsonBody.ts"
import { DEFAULT_BODY_LIMIT_BYTES, makeRouteTable, type RouteMatch } from "./RouteTable.ts"

const SELF_HOSTED_PREFIX = "/api/v1"
const API_PREFIX = "/v1"

const routes = makeRouteTable(Api)

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["transfer-encoding"] !== undefined ||
  (request.headers["content-length"] !== undefined && request.headers["content-length"] !== "0")

/** The first problem the headers show, if any. */
const headerProblem = (
  request: HttpServerRequest.HttpServerRequest,
  { endpoint, searchParams }: RouteMatch
): Errors.UnsupportedMediaType | Errors.RequestTooLarge | Errors.Unauthorized | Errors.InvalidRequest | undefined => {
  const contentType = (request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase()
  // An empty body may still name a content type that would be read another way (a form, multipart).
  const declaresOther = contentType !== "" && contentType !== "application/json" && HttpMethod.hasBody(request.method)
  if (hasBody(request) || declaresOther) {
    if (contentType !== "application/json") {
      return new Errors.UnsupportedMediaType({
        error: `Send the body as application/json${contentType ? `, not ${contentType}` : ""}`
      })
    }
    const length = Number(request.headers["content-length"] ?? 0)
    if (length > endpoint.limit) {
      return new Errors.RequestTooLarge({
        error: `The request body is ${length} bytes; this route accepts at most ${endpoint.limit} (${mebibytes(endpoint.limit)})`
      })
    }
  }
  const authorization = request.headers["authorization"]
  if (endpoint.authenticated && authorization !== undefined && !/^bearer(\s|$)/i.test(authorization)) {
    return new Errors.Unauthorized({
      error: "The Authorization header does not use the Bearer scheme: send 'Authorization: Bearer <API key>'"
    })
  }
  const unknown = Object.keys(searchParams).filter((name) => !endpoint.queryNames.includes(name))
  if (unknown.length > 0) {
    const allowed = endpoint.queryNames.length > 0
      ? `allowed parameters: ${endpoint.queryNames.join(", ")}`
      : "this route takes no query parameters"
    return new Errors.InvalidRequest({
      error: `Unknown query parameter${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; ${allowed}`,
      issues: unknown.map((name) => ({ path: "/" + name, message: `is not allowed here; ${allowed}` }))
    })
  }
  return undefined
}

/** Closes the connection after the response when the request's body has not fully arrived. */
const closeUnlessBodyComplete = (request: HttpServerRequest.HttpServerRequest) =>
  HttpApp.appendPreResponseHandler((_, response) =>
    Effect.succeed(
      hasBody(request) && !(request.source as IncomingMessage).complete
        ? HttpServerResponse.setHeader(response, "connection", "close")
        : response
    )
  )

export const RequestGuards = HttpApiBuilder.middleware(Api, (app) =>
  Effect.gen(function*() {
    const original = yield* HttpServerRequest.HttpServerRequest
    const rewritten = original.url.startsWith(SELF_HOSTED_PREFIX + "/")
      ? original.modify({ url: API_PREFIX + original.url.slice(SELF_HOSTED_PREFIX.length) })
      : original
    const match = routes.find(rewritten.method, rewritten.url)
    const request = new GuardedRequest(
      rewritten,
      new JsonBody(rewritten, match?.endpoint ?? { limit: DEFAULT_BODY_LIMIT_BYTES, contentBlockPaths: [] })
    )
    yield* closeUnlessBodyComplete(request)
    const problem = match && headerProblem(request, match)
    if (problem !== undefined) return yield* Effect.fail(asApiLevel(problem))
    return yield* app.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request),
      Effect.catchAllCause((cause) =>
        toApiError(cause, () => match === undefined ? undefined : explainDecodeFailure(match, request))
      )
    )
  }))
