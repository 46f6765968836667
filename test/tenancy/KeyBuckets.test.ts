/**
 * The keys' token buckets forget a bucket once it has refilled (KeyBuckets), so a process does not
 * keep one for every key it has seen; a bucket still refilling is kept, with what it holds, and a
 * key whose bucket was dropped is answered as a key never seen.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { RateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"
import { BUCKET_SWEEP_INTERVAL, makeKeyBuckets } from "../../src/services/tenancy/KeyBuckets.ts"

/** Three requests at once, then one every second (a bucket of 3 refilled in 3 s). */
const QUICK = { algorithm: "token-bucket", limit: 3, window: Duration.seconds(3), onExceeded: "fail" } as const
/** Three requests at once, then one every 200 s: still refilling at the first sweep. */
const SLOW = { ...QUICK, window: Duration.seconds(600) } as const

const buckets = Effect.gen(function*() {
  const { size, store } = yield* makeKeyBuckets
  const limiter = yield* RateLimiter.make.pipe(Effect.provideService(RateLimiter.RateLimiterStore, store))
  return { limiter, size }
})

describe("the keys' token buckets", () => {
  it.effect("a sweep drops the buckets that have refilled and keeps the others with what they hold", () =>
    Effect.gen(function*() {
      const { limiter, size } = yield* buckets
      for (let i = 0; i < 3; i++) yield* limiter.consume({ ...QUICK, key: "quick" })
      yield* limiter.consume({ ...SLOW, key: "slow" })
      yield* limiter.consume({ ...SLOW, key: "slow" })
      expect(yield* size).toBe(2)

      yield* TestClock.adjust(BUCKET_SWEEP_INTERVAL)
      expect(yield* size).toBe(1)

      // The slow key kept its bucket: one request left (none refilled in 60 s), then refused.
      expect((yield* limiter.consume({ ...SLOW, key: "slow" })).remaining).toBe(0)
      const refused = yield* Effect.flip(limiter.consume({ ...SLOW, key: "slow" }))
      expect(refused.reason._tag).toBe("RateLimitExceeded")
      // The quick key's bucket was dropped: it is answered as a key never seen.
      expect((yield* limiter.consume({ ...QUICK, key: "quick" })).remaining).toBe(2)
    }))

  it.effect("a key that sent a minute before a sweep is forgotten; one that sent just before it is kept", () =>
    Effect.gen(function*() {
      const { limiter, size } = yield* buckets
      for (let round = 0; round < 3; round++) {
        yield* limiter.consume({ ...QUICK, key: "steady" })
        yield* TestClock.adjust(Duration.subtract(BUCKET_SWEEP_INTERVAL, Duration.millis(1)))
        yield* limiter.consume({ ...QUICK, key: "busy" })
        yield* limiter.consume({ ...QUICK, key: "busy" })
        yield* TestClock.adjust(Duration.millis(1))
        // Each sweep finds "steady" full (a minute since its one request) and "busy" just spent.
        expect(yield* size).toBe(1)
      }
    }))
})
