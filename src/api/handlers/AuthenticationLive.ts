import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { Effect, Layer, Redacted } from "effect"
import { CSRF_HEADER, SESSION_COOKIE } from "../../domain/tenancy/BrowserSessions.ts"
import { CurrentPrincipal, type Principal } from "../../domain/tenancy/Principal.ts"
import { BrowserSessions } from "../../services/tenancy/BrowserSessions.ts"
import { ApiKeys } from "../../services/tenancy/ApiKeys.ts"
import { KeyRateLimits } from "../../services/tenancy/KeyRateLimits.ts"
import { withinRate } from "../../layers/http/RateLimitHeaders.ts"
import { Authentication, BearerAuthentication } from "../Security.ts"

/** The organization and project ids of the request's path, as sent. */
const requestPath = Effect.map(HttpRouter.params, (params) => ({ orgId: params.orgID, projectId: params.projectID }))

/** The bearer API key, read with the caller's standing in the organization and project of the route's path. */
export const byApiKey = (apiKeys: ApiKeys["Service"], token: string) =>
  Effect.flatMap(requestPath, (path) => apiKeys.authenticate(token, path))

/**
 * Runs a request as its caller: `httpEffect` as the caller that `caller` finds, within its key's
 * rate (KeyRateLimits, RateLimitHeaders.ts).
 */
export const callerRunner = (limits: KeyRateLimits["Service"]) => {
  const limited = withinRate(limits)
  return <E, R, E2, R2>(
    httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
    caller: Effect.Effect<Principal, E2, R2>
  ) =>
    Effect.flatMap(caller, (principal) => limited(principal.keyId, Effect.provideService(httpEffect, CurrentPrincipal, principal)))
}

/** The token of the request's `Authorization: Bearer` header ("" without one; RequestGuards refuses other schemes). */
const bearerToken = (request: HttpServerRequest.HttpServerRequest) => request.headers.authorization?.replace(/^bearer\s*/i, "").trim() ?? ""

/**
 * The request's caller, judged on the whole request whichever scheme Effect tries first: its
 * API key when it sends `Authorization: Bearer`, else its session cookie with the CSRF header,
 * else the API key's "send an API key" failure. A request that fails is judged again by the
 * other scheme's handler, with the same answer.
 */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys
    const sessions = yield* BrowserSessions
    const asCaller = callerRunner(yield* KeyRateLimits)
    const callerOf = (request: HttpServerRequest.HttpServerRequest) => {
      const token = bearerToken(request)
      const cookie = request.cookies[SESSION_COOKIE] ?? ""
      return token !== "" || cookie === ""
        ? byApiKey(apiKeys, token)
        : Effect.flatMap(requestPath, (path) => sessions.authenticate(cookie, request.headers[CSRF_HEADER], path))
    }
    const ofRequest = Effect.flatMap(HttpServerRequest.HttpServerRequest, callerOf)
    return Authentication.of({
      bearer: (httpEffect, { credential }) =>
        // The common case, an API key, without reading the request again.
        asCaller(httpEffect, Redacted.value(credential) !== "" ? byApiKey(apiKeys, Redacted.value(credential)) : ofRequest),
      session: (httpEffect) => asCaller(httpEffect, ofRequest)
    })
  })
)

/** The bearer API key only (the workspace-scoped routes, opening a browser session). */
export const BearerAuthenticationLive = Layer.effect(
  BearerAuthentication,
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys
    const asCaller = callerRunner(yield* KeyRateLimits)
    return BearerAuthentication.of({
      bearer: (httpEffect, { credential }) => asCaller(httpEffect, byApiKey(apiKeys, Redacted.value(credential)))
    })
  })
)
