/**
 * The model calls' timeouts as settings (README, "Configuration"; docs/model-adapters.md,
 * "Bounds"): seconds, fractions allowed, the defaults when unset or empty; anything else refused
 * with the variable's name.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { configFromEnv } from "../support/ConfigFromEnv.ts"

const read = (env: Record<string, string>) =>
  Effect.map(configFromEnv(env), (config) => ({
    head: Duration.toMillis(config.modelHeadTimeout),
    idle: Duration.toMillis(config.modelIdleTimeout),
    call: Duration.toMillis(config.modelCallTimeout)
  }))

describe("model timeout settings", () => {
  it.effect("unset or empty: 5 minutes for the head and each pause, 60 for the call", () =>
    Effect.gen(function*() {
      expect(yield* read({})).toEqual({ head: 300_000, idle: 300_000, call: 3_600_000 })
      expect(yield* read({ AGENT_PLATFORM_MODEL_IDLE_TIMEOUT_SECONDS: "" })).toEqual({ head: 300_000, idle: 300_000, call: 3_600_000 })
    }))

  it.effect("seconds, fractions allowed", () =>
    Effect.gen(function*() {
      expect(yield* read({
        AGENT_PLATFORM_MODEL_HEAD_TIMEOUT_SECONDS: "30",
        AGENT_PLATFORM_MODEL_IDLE_TIMEOUT_SECONDS: "0.5",
        AGENT_PLATFORM_MODEL_CALL_TIMEOUT_SECONDS: "7200"
      })).toEqual({ head: 30_000, idle: 500, call: 7_200_000 })
    }))

  it.effect("0, a negative number or a word: refused, naming the variable", () =>
    Effect.gen(function*() {
      for (const value of ["0", "-5", "soon"]) {
        const error = yield* Effect.flip(read({ AGENT_PLATFORM_MODEL_CALL_TIMEOUT_SECONDS: value }))
        expect(String(error), value).toContain("AGENT_PLATFORM_MODEL_CALL_TIMEOUT_SECONDS")
        expect(String(error), value).toContain("a number of seconds above 0")
      }
    }))
})
