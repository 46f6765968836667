/**
 * Before a route runs, from the headers alone (nothing of the body is read here): refuse an
 * HTTP/1.1 request without a Host header, a request with several, and a target with a fragment
 * (400); give the routers a target whose query starts at `?` only (`routedUrl`); serve
 * `/api/v1/...` as `/v1/...`; answer a path that reaches a route only with an empty parameter
 * (`/v1/orgs/`) as one no route takes (404, as the router answers other inexact paths,
 * RouteTable.ts); on a route that takes a body, refuse one that is not JSON, not
 * UTF-8, labelled by several Content-Type headers, or sent with a Content-Encoding or a transfer
 * coding other than chunked (415), or that
 * declares more bytes than the route accepts (413) (a route that takes none ignores it, whatever
 * it is); refuse an Authorization header without the Bearer scheme (401); several Authorization
 * headers, a header parameter the endpoint declares sent more than once, a query that is not
 * valid percent-encoding and query parameters the endpoint does not declare (400).
 * Then the route runs with a GuardedRequest, whose body is read, scanned and limited only when the route asks for it,
 * after authentication. A response to a request whose body was not read to its end closes the
 * connection, so the rest of an unwanted body is never read. Failures are mapped by ErrorMapping.
 */
import { HttpEffect, HttpMethod, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect, Layer } from "effect"
import type { IncomingMessage } from "node:http"
import { Api } from "../../api/Api.ts"
import { ApiErrors } from "../../api/ApiErrors.ts"
import { formatMiB } from "../../domain/runtime/Limits.ts"
import * as Errors from "../../domain/shared/Errors.ts"
import { listedOf } from "../../domain/shared/ListedIssues.ts"
import { explainDecodeFailure } from "./DecodeFailures.ts"
import { partFailure } from "./DecodeIssues.ts"
import { errorResponse, isPercentEncoded, notPercentEncoded, routeNotFoundResponse, toApiError, unroutedRequest } from "./ErrorMapping.ts"
import { GuardedRequest } from "./GuardedRequest.ts"
import { headerCount } from "./HeaderCount.ts"
import { JsonBody } from "./JsonBody.ts"
import { OTHER_ROUTES } from "./OtherRoutes.ts"
import { DEFAULT_BODY_LIMIT_BYTES, hasEmptyParameter, makeRouteTable, type RouteMatch } from "./RouteTable.ts"

const SELF_HOSTED_PREFIX = "/api/v1"
const API_PREFIX = "/v1"

const routes = makeRouteTable(Api, OTHER_ROUTES)

/** A `charset` parameter of a Content-Type, its value (quoted or not) captured. */
const CHARSET_PARAMETER = /;\s*charset\s*=\s*"?([^";\s]+)/gi

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["transfer-encoding"] !== undefined ||
  (request.headers["content-length"] !== undefined && request.headers["content-length"] !== "0")

/**
 * An HTTP/1.1 request without a Host header, which HTTP/1.1 requires (RFC 9112, 3.2). Node's own
 * refusal of it is an empty 400, so the listener lets it through (NodeServer.ts) and it is refused here.
 */
const lacksHost = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["host"] === undefined && (request.source as Partial<IncomingMessage>).httpVersion === "1.1"

/**
 * The request target as the routers are given it: only `?` starts the query (RFC 3986, 3.4).
 * effect/http's router (a port of find-my-way, with no option to change it) also ends the path
 * at `;` and `#`, where the guards below, which check the query, did not: `/files;path=a%FFb`
 * reached the files route with a query no guard had looked at, and `/v1/orgs/org_x;x=1/projects`
 * reached `/v1/orgs/{orgID}` with `/projects` in a query value. Each `;` of the path is given to
 * the routers as `%3B`, which they decode back to `;` in a path parameter: a character of the
 * path, in this table as in the Api's router, since this request is the one both are given.
 * Undefined when the target holds a `#`: a fragment is never sent in HTTP (RFC 9112, 3.2: the
 * origin form is a path and a query), and no part of a request reaches a route through one.
 */
const routedUrl = (url: string): string | undefined => {
  if (url.includes("#")) return undefined
  const query = url.indexOf("?")
  const path = query < 0 ? url : url.slice(0, query)
  return path.includes(";") ? path.replaceAll(";", "%3B") + url.slice(path.length) : url
}

/**
 * More than one Host header, which a server must answer 400 (RFC 9112, 3.2), in any HTTP version:
 * Node keeps the first, and which host was meant is not known.
 */
const hasSeveralHosts = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["host"] !== undefined && headerCount(request, "host") > 1

/**
 * The first transfer coding other than `chunked` (and `identity`), lower case, if any. Node
 * frames a body whose last coding is chunked and hands on its bytes without undoing the others,
 * so `gzip, chunked` was read as the compressed bytes. (Node joins several headers with ", ".)
 */
const unsupportedTransferCoding = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  (request.headers["transfer-encoding"] ?? "").split(",")
    .map((coding) => coding.split(";")[0].trim().toLowerCase())
    .find((coding) => coding !== "" && coding !== "chunked" && coding !== "identity")

/** What is wrong with how the body is labelled or sized, on a route that takes one. */
const bodyProblem = (
  request: HttpServerRequest.HttpServerRequest,
  endpoint: RouteMatch["endpoint"]
): Errors.UnsupportedMediaType | Errors.RequestTooLarge | undefined => {
  const contentType = (request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase()
  // An empty body may still name a content type that would be read another way (a form, multipart).
  const declaresOther = contentType !== "" && contentType !== "application/json" && HttpMethod.hasBody(request.method)
  // A route that takes no body never reads one: whatever is sent is ignored, as it is labelled.
  if (endpoint.takesBody && (hasBody(request) || declaresOther)) {
    // Node keeps the first Content-Type and drops the others: how the body was meant is not known.
    if (headerCount(request, "content-type") > 1) {
      return new Errors.UnsupportedMediaType({ error: "Send one Content-Type header, application/json; this request sends several" })
    }
    if (contentType !== "application/json") {
      return new Errors.UnsupportedMediaType({
        error: `Send the body as application/json${contentType ? `, not ${contentType}` : ""}`
      })
    }
    // Every charset parameter: `charset=utf-8; charset=latin1` names two.
    const charset = Array.from((request.headers["content-type"] ?? "").matchAll(CHARSET_PARAMETER), (match) => match[1].toLowerCase())
      .find((name) => name !== "utf-8" && name !== "utf8")
    if (charset !== undefined) {
      return new Errors.UnsupportedMediaType({ error: `Send the JSON body in UTF-8 (charset=utf-8 or no charset), not ${charset}` })
    }
    const encoding = (request.headers["content-encoding"] ?? "identity").trim().toLowerCase()
    if (encoding !== "identity" && encoding !== "") {
      return new Errors.UnsupportedMediaType({ error: `Send the body without a Content-Encoding (${encoding} is not accepted)` })
    }
    const transferCoding = unsupportedTransferCoding(request)
    if (transferCoding !== undefined) {
      return new Errors.UnsupportedMediaType({
        error: `Send the body without a Transfer-Encoding other than chunked (${transferCoding} is not accepted)`
      })
    }
    const length = Number(request.headers["content-length"] ?? 0)
    if (length > endpoint.limit) {
      return new Errors.RequestTooLarge({
        error: `The request body is ${length} bytes; this route accepts at most ${endpoint.limit} (${formatMiB(endpoint.limit)})`
      })
    }
  }
  return undefined
}

/** What is wrong with the Authorization header, or with the headers the route reads. */
const credentialsProblem = (
  request: HttpServerRequest.HttpServerRequest,
  endpoint: RouteMatch["endpoint"]
): Errors.Unauthorized | Errors.InvalidRequest | undefined => {
  const authorization = request.headers["authorization"]
  if (authorization !== undefined && headerCount(request, "authorization") > 1) {
    // Node keeps the first and drops the others: which key the caller meant is not known.
    return new Errors.InvalidRequest({ error: "Send one Authorization header; this request sends several" })
  }
  // Node joins a repeated header's values ("1, 2"): which one was meant is not known, as of a query parameter given twice.
  const repeated = endpoint.headerNames.filter((name) => headerCount(request, name) > 1)
  if (repeated.length > 0) {
    return partFailure(repeated.map((name) => ({ path: "/" + name, message: "is given more than once; give it once" })), "headers")
  }
  if (endpoint.authenticated && authorization !== undefined && !/^bearer(\s|$)/i.test(authorization)) {
    return new Errors.Unauthorized({
      error: "The Authorization header does not use the Bearer scheme: send 'Authorization: Bearer <API key>'"
    })
  }
  return undefined
}

/** What is wrong with the query: not percent-encoded, or naming parameters the route does not take. */
const queryProblem = (
  request: HttpServerRequest.HttpServerRequest,
  { endpoint, searchParams }: RouteMatch
): Errors.InvalidRequest | undefined => {
  // A query that does not decode would reach the route as typed (`%FF` read as those three characters).
  const query = request.url.indexOf("?")
  if (query >= 0 && !isPercentEncoded(request.url.slice(query + 1))) {
    return new Errors.InvalidRequest({ error: notPercentEncoded("The query") })
  }
  const unknown = Object.keys(searchParams).filter((name) => !endpoint.queryNames.includes(name))
  if (unknown.length > 0) {
    const allowed = endpoint.queryNames.length > 0
      ? `allowed parameters: ${endpoint.queryNames.join(", ")}`
      : "this route takes no query parameters"
    // A parameter without a name (`&=b`) first, said so: listed as an unknown name, it read as nothing.
    const nameless = unknown.includes("")
    const unknownNames = unknown.filter((name) => name !== "")
    // Listed as issues are, at most MAX_LISTED_ISSUES: a query may name thousands.
    const { listed, more } = listedOf(nameless ? ["", ...unknownNames] : unknownNames)
    const sentences: Array<string> = []
    if (nameless) sentences.push("A query parameter has no name (a `=` with nothing before it): name it or leave it out")
    if (unknownNames.length > 0) {
      const names = listed.filter((name) => name !== "").join(", ")
      sentences.push(`${nameless ? "unknown" : "Unknown"} query parameter${unknownNames.length > 1 ? "s" : ""} ${names}${more}`)
    }
    return new Errors.InvalidRequest({
      error: `${sentences.join("; ")}; ${allowed}`,
      // The empty name's pointer is `/`, as any parameter's is `/` and its name (RFC 6901).
      issues: listed.map((name) => ({
        path: "/" + name,
        message: name === "" ? `has no name: name it or leave it out; ${allowed}` : `is not allowed here; ${allowed}`
      }))
    })
  }
  return undefined
}

/** The first problem the request's headers and query show, if any. */
const headerProblem = (
  request: HttpServerRequest.HttpServerRequest,
  match: RouteMatch
): Errors.UnsupportedMediaType | Errors.RequestTooLarge | Errors.Unauthorized | Errors.InvalidRequest | undefined =>
  bodyProblem(request, match.endpoint) ?? credentialsProblem(request, match.endpoint) ?? queryProblem(request, match)

/** Closes the connection after the response when the request's body has not fully arrived. */
const closeUnlessBodyComplete = (request: HttpServerRequest.HttpServerRequest) =>
  HttpEffect.appendPreResponseHandler((_, response) =>
    Effect.succeed(
      hasBody(request) && !(request.source as IncomingMessage).complete
        ? HttpServerResponse.setHeader(response, "connection", "close")
        : response
    )
  )

/**
 * The router's handler behind the guards. What the Api does not answer itself (a request refused
 * from its headers, a route that is not there, a failure of a route outside the Api) is answered
 * here as the Api answers its errors.
 */
export const guarded = <E, R>(
  router: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const original = yield* HttpServerRequest.HttpServerRequest
    if (lacksHost(original)) return errorResponse(new Errors.InvalidRequest({ error: "Send a Host header: HTTP/1.1 requires one" }))
    if (hasSeveralHosts(original)) return errorResponse(new Errors.InvalidRequest({ error: "Send one Host header; this request sends several" }))
    const routed = routedUrl(original.url)
    if (routed === undefined) {
      return errorResponse(new Errors.InvalidRequest({
        error: "The request target has a fragment (#...), which HTTP requests do not carry: leave it out, or write a # in a path or query as %23"
      }))
    }
    const url = routed.startsWith(SELF_HOSTED_PREFIX + "/") ? API_PREFIX + routed.slice(SELF_HOSTED_PREFIX.length) : routed
    const rewritten = url === original.url ? original : original.modify({ url })
    const match = routes.find(rewritten.method, rewritten.url)
    const request = new GuardedRequest(
      rewritten,
      new JsonBody(rewritten, match?.endpoint ?? { limit: DEFAULT_BODY_LIMIT_BYTES, contentBlockPaths: [] })
    )
    yield* closeUnlessBodyComplete(request)
    if (match !== undefined && hasEmptyParameter(match)) return routeNotFoundResponse(request, routes.methodsAt(rewritten.url))
    const problem = match && headerProblem(request, match)
    if (problem !== undefined) return errorResponse(problem)
    return yield* router.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request),
      Effect.catchCause((cause) => {
        const unrouted = unroutedRequest(cause)
        if (unrouted !== undefined) return Effect.succeed(routeNotFoundResponse(unrouted, routes.methodsAt(rewritten.url)))
        return toApiError(cause, (failure) => match === undefined ? undefined : explainDecodeFailure(match, request, failure))
      }),
      Effect.catch((error) => Effect.succeed(errorResponse(error)))
    )
  })

/**
 * The Api-level middleware of every endpoint (src/api/ApiErrors.ts), the outermost: what escapes
 * a route (a decode failure, a defect) as one of our errors, which the Api encodes with its status.
 */
export const ApiErrorsLive = Layer.succeed(ApiErrors)((httpEffect) =>
  Effect.catchCause(httpEffect, (cause) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      toApiError(cause, (failure) => {
        const match = request instanceof GuardedRequest ? routes.find(request.method, request.url) : undefined
        return match === undefined ? undefined : explainDecodeFailure(match, request as GuardedRequest, failure)
      })))
)
