/**
 * Where the keys' token buckets live (KeyRateLimits): effect/persistence's in-memory
 * RateLimiterStore, except that its token buckets are kept here so that a full one can be
 * forgotten. A full bucket is what a key never seen gets, so dropping it changes no answer; every
 * `BUCKET_SWEEP_INTERVAL` the buckets that have refilled are dropped, and the map holds the keys
 * that sent within about a burst's refill time (ten seconds by default), not every key used since
 * the process started (a loop creating, using and deleting keys would otherwise grow it for ever).
 */
import { RateLimiter } from "effect/persistence"
import { Duration, Effect, Schedule } from "effect"

/** How often the full buckets are dropped. */
export const BUCKET_SWEEP_INTERVAL = Duration.minutes(1)

interface Bucket {
  tokens: number
  /** When the current refill interval started (ms). */
  lastRefill: number
  /** The bucket's size and refill interval, to tell in a sweep whether it has refilled. */
  readonly limit: number
  readonly refillMillis: number
}

/** Adds the whole refill intervals passed since `lastRefill` (capped at `limit`); a full bucket's interval restarts now. */
const refill = (bucket: Bucket, now: number) => {
  const intervals = Math.floor((now - bucket.lastRefill) / bucket.refillMillis)
  if (intervals > 0) {
    bucket.tokens = Math.min(bucket.limit, bucket.tokens + intervals)
    bucket.lastRefill += intervals * bucket.refillMillis
  }
  if (bucket.tokens >= bucket.limit) bucket.lastRefill = now
}

/**
 * The store, and how many buckets it holds (for its tests). Its sweep runs in the scope; the
 * fixed-window and adaptive states (which the keys' rates do not use) are the in-memory store's.
 */
export const makeKeyBuckets = Effect.gen(function*() {
  const memory = yield* RateLimiter.RateLimiterStore.pipe(Effect.provide(RateLimiter.layerStoreMemory))
  const buckets = new Map<string, Bucket>()

  const store = RateLimiter.RateLimiterStore.of({
    ...memory,
    // The semantics of the in-memory store's token bucket (RateLimiterStore's contract).
    tokenBucket: ({ allowOverflow, key, limit, refillRate, tokens }) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          const now = clock.currentTimeMillisUnsafe()
          let bucket = buckets.get(key)
          if (bucket === undefined) {
            bucket = { tokens: limit, lastRefill: now, limit, refillMillis: Duration.toMillis(refillRate) }
            buckets.set(key, bucket)
          }
          refill(bucket, now)
          const remaining = bucket.tokens - tokens
          if (allowOverflow || remaining >= 0) bucket.tokens = remaining
          return [remaining, Math.max(0, now - bucket.lastRefill)] as const
        })
      )
  })

  const dropFull = Effect.clockWith((clock) =>
    Effect.sync(() => {
      const now = clock.currentTimeMillisUnsafe()
      for (const [key, bucket] of buckets) {
        refill(bucket, now)
        if (bucket.tokens >= bucket.limit) buckets.delete(key)
      }
    })
  )
  yield* dropFull.pipe(Effect.repeat(Schedule.spaced(BUCKET_SWEEP_INTERVAL)), Effect.forkScoped)

  return { store, size: Effect.sync(() => buckets.size) }
})
