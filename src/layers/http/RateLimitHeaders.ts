/**
 * A key's rate on the wire (docs/api-conventions.md, "Rate limits"): every response to a request
 * a key authenticated carries `RateLimit-Limit` (the burst a key may send at once),
 * `RateLimit-Remaining` (what it may still send at once) and `RateLimit-Reset` (seconds until it
 * may send a whole burst again), the fields of the IETF draft "RateLimit header fields for HTTP"
 * that most servers send; a request over the rate is `429 rate_limited` with `Retry-After`.
 */
import { HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { RateLimited } from "../../domain/shared/Errors.ts"
import type { Allowance, KeyRateLimits, Refusal } from "../../services/tenancy/KeyRateLimits.ts"
import { errorResponse } from "./ErrorMapping.ts"

/** The headers a browser may read from an answer of another origin (Cors.ts). */
export const RATE_LIMIT_HEADERS = ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after"]

const allowanceHeaders = ({ limit, remaining, resetSeconds }: Allowance) => ({
  "ratelimit-limit": String(limit),
  "ratelimit-remaining": String(Math.floor(remaining)),
  "ratelimit-reset": String(resetSeconds)
})

/** `response` with the `RateLimit-*` headers of `allowance`. */
const withAllowance = (allowance: Allowance) => (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, allowanceHeaders(allowance))

/** The answer to a request over its key's rate. */
const rateLimitedResponse = ({ rate, retryAfterSeconds }: Refusal): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.setHeaders(
    errorResponse(
      new RateLimited({
        error: `Too many requests with this API key: it may send ${rate.perSecond} a second and ${rate.burst} at once; ` +
          `retry after ${retryAfterSeconds} s (the Retry-After header)`
      })
    ),
    {
      "retry-after": String(retryAfterSeconds),
      ...allowanceHeaders({ limit: rate.burst, remaining: 0, resetSeconds: retryAfterSeconds })
    }
  )

/**
 * `httpEffect` when the credential `credentialId` is within its rate, its response carrying the
 * credential's allowance; else the 429, without running it (nothing of the request is read).
 */
export const withinRate = (limits: KeyRateLimits["Service"]) =>
<E, R>(credentialId: string, httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(limits.admit(credentialId), (admission) => {
    if (!admission.admitted) return Effect.succeed(rateLimitedResponse(admission.refusal))
    return admission.allowance === undefined ? httpEffect : Effect.map(httpEffect, withAllowance(admission.allowance))
  })
