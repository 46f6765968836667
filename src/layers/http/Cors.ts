/**
 * CORS for browsers on the origins of AGENT_PLATFORM_CORS_ORIGINS (none by default). A request
 * from an allowed origin gets the CORS headers, and its preflight (`OPTIONS`) is answered 204
 * with the methods and headers the API takes (Authorization, Content-Type, Last-Event-ID,
 * X-Request-Id, X-CSRF-Token), exposing `x-request-id` and the rate limit's headers, and with credentials allowed, so that a
 * page of such an origin may call the API with a browser session's cookie (docs/access.md). Any
 * other origin gets no CORS header at all (and its preflight reaches the router, which has no
 * OPTIONS route).
 */
import { HttpMiddleware, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { CSRF_HEADER } from "../../domain/tenancy/BrowserSessions.ts"
import { RATE_LIMIT_HEADERS } from "./RateLimitHeaders.ts"

/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE = 600

export const corsFor = (
  origins: ReadonlyArray<string>
): <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> => {
  if (origins.length === 0) return (app) => app
  const allowed = new Set(origins)
  const cors = HttpMiddleware.cors({
    // A predicate, not the list: with one origin effect/http would send it to every caller.
    allowedOrigins: (origin) => allowed.has(origin),
    allowedMethods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
    allowedHeaders: ["authorization", "content-type", "last-event-id", "x-request-id", CSRF_HEADER],
    exposedHeaders: ["x-request-id", ...RATE_LIMIT_HEADERS],
    credentials: true,
    maxAge: PREFLIGHT_MAX_AGE
  })
  return (app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const origin = request.headers["origin"]
      return origin !== undefined && allowed.has(origin) ? cors(app) : app
    })
}
