/**
 * Machine tokens (docs/machines.md, "Registration"): HS256 JWTs that verify with the server's key
 * until they expire; a token of another key, a changed claim or an expired one does not verify.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { MachineId } from "../../src/domain/shared/Ids.ts"
import { MACHINE_TOKEN_TTL_SECONDS, MachineTokens } from "../../src/services/machines/MachineTokens.ts"
import { testConfig } from "../support/TestApp.ts"

const machineId = MachineId.make("mch_aaaaaaaaaaaaaaaaaaaaaaaaaa")

/** A clock `offsetMs` away from the real one. */
const shifted = (offsetMs: number): Clock.Clock => {
  const now = () => Date.now() + offsetMs
  const live = Clock.Clock.defaultValue()
  return {
    currentTimeMillisUnsafe: now,
    currentTimeNanosUnsafe: () => BigInt(now()) * 1_000_000n,
    currentTimeMillis: Effect.sync(now),
    currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: live.monotonicTimeNanos,
    sleep: (duration) => live.sleep(duration)
  }
}

const withTokens = <A>(f: (tokens: typeof MachineTokens.Service) => Effect.Effect<A>, secretKey = testConfig()) =>
  Effect.flatMap(MachineTokens, f).pipe(Effect.provide(MachineTokens.layer), Effect.provide(secretKey))

/** The configuration of a server with another secret key than the tests' own. */
const anotherServer = testConfig({ secretKey: Option.some(Redacted.make(randomBytes(32).toString("base64"))) })

describe("machine tokens", () => {
  it.live("verify until they expire; forged, altered or foreign tokens do not", () =>
    Effect.gen(function*() {
      const issued = yield* withTokens((tokens) =>
        Effect.gen(function*() {
          const fresh = yield* tokens.issue(machineId, "dtok_x")
          expect(fresh.expiresIn).toBe(MACHINE_TOKEN_TTL_SECONDS)
          const claims = yield* tokens.verify(fresh.token)
          expect(Option.getOrThrow(claims)).toMatchObject({ sub: machineId, cred: "dtok_x", typ: "machine" })
          const stale = yield* Effect.provideService(tokens.issue(machineId, "dtok_x"), Clock.Clock, shifted(-(MACHINE_TOKEN_TTL_SECONDS + 1) * 1000))
          expect(Option.isNone(yield* tokens.verify(stale.token))).toBe(true)
          const [header, payload, signature] = fresh.token.split(".")
          const altered = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), sub: "mch_bbbbbbbbbbbbbbbbbbbbbbbbbb" }))
            .toString("base64url")
          expect(Option.isNone(yield* tokens.verify(`${header}.${altered}.${signature}`))).toBe(true)
          expect(Option.isNone(yield* tokens.verify("not.a.token"))).toBe(true)
          return fresh.token
        }))
      expect(Option.isNone(yield* withTokens((tokens) => tokens.verify(issued), anotherServer))).toBe(true)
    }))
})
