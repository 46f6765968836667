import { HttpRouter, HttpServerRequest } from "effect/http"
import { Effect, Layer, Redacted } from "effect"
import { Unauthorized } from "../../domain/shared/Errors.ts"
import { StreamTokens } from "../../services/runtime/StreamTokens.ts"
import { ApiKeys } from "../../services/tenancy/ApiKeys.ts"
import { KeyRateLimits } from "../../services/tenancy/KeyRateLimits.ts"
import { StreamAuthentication } from "../Security.ts"
import { byApiKey, callerRunner } from "./AuthenticationLive.ts"

const missing = new Unauthorized({
  error: "Send an API key as 'Authorization: Bearer <token>', or a stream token as ?stream_token= " +
    "(POST .../events/stream-token: valid 5 minutes, for one agent, while the key that minted it exists)"
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
    return StreamAuthentication.of({
      streamToken: (httpEffect, { credential }) =>
        asCaller(httpEffect, Redacted.value(credential) === "" ? Effect.fail(missing) : byStreamToken(Redacted.value(credential))),
      bearer: (httpEffect, { credential }) =>
        asCaller(
          httpEffect,
          Redacted.value(credential) !== ""
            ? byApiKey(apiKeys, Redacted.value(credential))
            : Effect.flatMap(Effect.service(HttpServerRequest.ParsedSearchParams), (query) => {
              const sent = query.stream_token
              return typeof sent === "string" && sent !== "" ? byStreamToken(sent) : Effect.fail(missing)
            })
        )
    })
  })
)
