/**
 * How fast one credential may call (docs/api-conventions.md, "Rate limits"): a token bucket per API
 * key (or daemon token, or pool, for machine registration), refilled at `perSecond` requests a
 * second and holding at most `burst`, so a key may send `burst` requests at once and then
 * `perSecond` a second. Every request a key authenticates counts, whichever way it arrives (the key
 * itself, a browser session it opened, a stream token it minted).
 *
 * The buckets live in this process (KeyBuckets: effect/persistence's in-memory RateLimiter store,
 * forgetting full buckets): with several server processes a key may send its rate to each
 * (docs/scale-out.md). A bucket (about 150 bytes) is kept for each credential that sent within its
 * burst's refill time.
 */
import { RateLimiter } from "effect/persistence"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { AppConfig, type KeyRate } from "../../layers/AppConfig.ts"
import { makeKeyBuckets } from "./KeyBuckets.ts"

/** What a key may still send, for the response's `RateLimit-*` headers. */
export interface Allowance {
  /** The bucket's size (`burst`). */
  readonly limit: number
  /** Requests the key may send at once from now. */
  readonly remaining: number
  /** Seconds until the bucket is full again (0 when it is). */
  readonly resetSeconds: number
}

/** A request over the key's rate: the key's allowance is spent, and `retryAfterSeconds` brings a request back. */
export interface Refusal {
  readonly rate: KeyRate
  readonly retryAfterSeconds: number
}

/** A request admitted (with what its key may still send, unless no rate is set), or refused. */
export type Admission =
  | { readonly admitted: true; readonly allowance: Allowance | undefined }
  | { readonly admitted: false; readonly refusal: Refusal }

const UNLIMITED: Admission = { admitted: true, allowance: undefined }

/** Whole seconds, rounded up (HTTP's Retry-After and the reset header count whole seconds). */
const wholeSeconds = (duration: Duration.Duration) => Math.ceil(Duration.toMillis(duration) / 1000)

const make = Effect.gen(function*() {
  const rate = (yield* AppConfig).keyRate
  if (Option.isNone(rate)) return { admit: (_: string): Effect.Effect<Admission> => Effect.succeed(UNLIMITED) }
  const { perSecond, burst } = rate.value
  const { store } = yield* makeKeyBuckets
  const limiter = yield* RateLimiter.make.pipe(Effect.provideService(RateLimiter.RateLimiterStore, store))
  // The bucket refills one request every 1/perSecond seconds, so `burst` of them take burst/perSecond.
  const window = Duration.millis((burst / perSecond) * 1000)
  return {
    /** Spends one request of the bucket of the credential `credentialId` (an API key's id, a daemon token's). */
    admit: (credentialId: string): Effect.Effect<Admission> =>
      limiter.consume({ algorithm: "token-bucket", key: credentialId, limit: burst, window, onExceeded: "fail" }).pipe(
        Effect.map((result): Admission => ({
          admitted: true,
          allowance: { limit: burst, remaining: Math.max(0, result.remaining), resetSeconds: wholeSeconds(result.resetAfter) }
        })),
        Effect.catchTag("RateLimiterError", ({ reason }) =>
          reason._tag === "RateLimitExceeded"
            ? Effect.succeed<Admission>({
              admitted: false,
              // At least a second: Retry-After counts whole seconds, and 0 would ask for a retry at once.
              refusal: { rate: rate.value, retryAfterSeconds: Math.max(1, wholeSeconds(reason.retryAfter)) }
            })
            // The in-memory store never fails.
            : Effect.die(reason))
      )
  }
})

export class KeyRateLimits extends Context.Service<KeyRateLimits, Effect.Success<typeof make>>()("KeyRateLimits") {
  static readonly layer = Layer.effect(KeyRateLimits, make)
}
