import { HttpRouter, HttpServerRequest } from "effect/http"
import { Effect, Layer, Redacted } from "effect"
import { type AuthenticationUnavailable, InvalidRequest, Unauthorized } from "../../domain/shared/Errors.ts"
import type { Principal } from "../../domain/tenancy/Principal.ts"
import { StreamTokens } from "../../services/runtime/StreamTokens.ts"
import { ApiKeys } from "../../services/tenancy/ApiKeys.ts"
import { KeyRateLimits } from "../../services/tenancy/KeyRateLimits.ts"
import { StreamAuthentication } from "../Security.ts"
import { byApiKey, callerRunner } from "./AuthenticationLive.ts"

const missing = new Unauthorized({
  error: "Send an API key as 'Authorization: Bearer <token>', or a stream token as ?stream_token= " +
    "(POST .../events/stream-token: valid 5 minutes, for one agent, while the key that minted it exists)"
})

const givenTwice = new InvalidRequest({
  error: "stream_token: is given more than once; give it once",
  issues: [{ path: "/stream_token", message: "is given more than once; give it once" }]
})

/**
 * The stream token first (bound to the agent of the path), else the bearer key. The answer to a
 * request that has neither is the bearer's failure, or the stream token's when only one was sent.
 */
export const StreamAuthenticationLive = Layer.effect(
  StreamAuthentication,
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys
    const streamTokens = yield* StreamTokens
    const asCaller = callerRunner(yield* KeyRateLimits)
    const byStreamToken = (token: string) =>
      Effect.flatMap(HttpRouter.params, (params) => streamTokens.authenticate(token, params.agentID))
    /** The stream token of the query, when the request sends no bearer key. */
    const byQueryToken = Effect.flatMap(
      Effect.service(HttpServerRequest.ParsedSearchParams),
      (query): Effect.Effect<Principal, InvalidRequest | Unauthorized | AuthenticationUnavailable, HttpRouter.RouteContext> => {
        const sent = query.stream_token
        // Given twice, it arrives as a list: the caller's mistake, as any query parameter given twice.
        if (Array.isArray(sent)) return Effect.fail(givenTwice)
        return typeof sent === "string" && sent !== "" ? byStreamToken(sent) : Effect.fail(missing)
      }
    )
    return StreamAuthentication.of({
      streamToken: (httpEffect, { credential }) =>
        asCaller(httpEffect, Redacted.value(credential) === "" ? Effect.fail(missing) : byStreamToken(Redacted.value(credential))),
      bearer: (httpEffect, { credential }) =>
        asCaller(httpEffect, Redacted.value(credential) !== "" ? byApiKey(apiKeys, Redacted.value(credential)) : byQueryToken)
    })
  })
)
