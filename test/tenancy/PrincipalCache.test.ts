/**
 * The cache of principals (src/services/tenancy/PrincipalCache.ts) by itself: what it keeps, and
 * that a principal read while a change was told is not kept (the read may have seen the rows
 * before the change).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { ApiKeyId, UserId } from "../../src/domain/shared/Ids.ts"
import type { Principal } from "../../src/domain/tenancy/Principal.ts"
import { PrincipalCache } from "../../src/services/tenancy/PrincipalCache.ts"

const principal: Principal = { kind: "user", userId: "usr_a" as UserId, keyId: "key_a" as ApiKeyId }

/** A read of `found` that counts its runs, and runs `during` while it reads. */
const countedRead = (found: Option.Option<Principal>, during: () => void = () => {}) => {
  const read = { runs: 0, effect: Effect.sync(() => {
    read.runs++
    during()
    return found
  }) }
  return read
}

describe("PrincipalCache", () => {
  it.effect("keeps a principal found until a change is told; a key found nowhere is read every time", () =>
    Effect.gen(function*() {
      const { cache, forgetAll } = PrincipalCache.keeping()
      const read = countedRead(Option.some(principal))
      expect(yield* cache.through("k", read.effect)).toEqual(Option.some(principal))
      expect(yield* cache.through("k", read.effect)).toEqual(Option.some(principal))
      expect(read.runs).toBe(1)
      forgetAll()
      yield* cache.through("k", read.effect)
      expect(read.runs).toBe(2)

      const unknown = countedRead(Option.none())
      yield* cache.through("unknown", unknown.effect)
      expect(yield* cache.through("unknown", unknown.effect)).toEqual(Option.none())
      expect(unknown.runs).toBe(2)
    }))

  it.effect("a principal read while a change is told is not kept", () =>
    Effect.gen(function*() {
      const { cache, forgetAll } = PrincipalCache.keeping()
      const overtaken = countedRead(Option.some(principal), forgetAll)
      expect(yield* cache.through("k", overtaken.effect)).toEqual(Option.some(principal))
      const next = countedRead(Option.some(principal))
      yield* cache.through("k", next.effect)
      expect(next.runs).toBe(1)
      // That one, read with nothing told meanwhile, is kept.
      const after = countedRead(Option.some(principal))
      yield* cache.through("k", after.effect)
      expect(after.runs).toBe(0)
    }))

  it.effect("without a cache every request reads", () =>
    Effect.gen(function*() {
      const read = countedRead(Option.some(principal))
      yield* PrincipalCache.none.through("k", read.effect)
      yield* PrincipalCache.none.through("k", read.effect)
      expect(read.runs).toBe(2)
    }))
})
