/**
 * The machines' and pools' waits as settings (README, "Configuration"; docs/machines.md,
 * docs/machine-pools.md): whole seconds, the defaults when unset; anything else refused with the
 * variable's name, as every setting is, so the server and `npm run cli` stop on the same values.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { configFromEnv } from "../support/ConfigFromEnv.ts"

const read = (env: Record<string, string>) =>
  Effect.map(configFromEnv(env), (config) => ({
    offline: config.machineOfflineWaitSeconds,
    admission: config.poolAdmissionWaitSeconds,
    minute: config.poolMinuteSeconds
  }))

const refused = (name: string, value: string, expected: string) =>
  Effect.gen(function*() {
    const error = String(yield* Effect.flip(read({ [name]: value })))
    expect(error, `${name}=${value}`).toContain(name)
    expect(error, `${name}=${value}`).toContain(expected)
  })

describe("machine and pool wait settings", () => {
  it.effect("unset: 60 seconds each", () =>
    Effect.gen(function*() {
      expect(yield* read({})).toEqual({ offline: 60, admission: 60, minute: 60 })
    }))

  it.effect("whole seconds are read; a pool's admission may be refused at once (0)", () =>
    Effect.gen(function*() {
      expect(yield* read({
        AGENT_PLATFORM_MACHINE_OFFLINE_WAIT_SECONDS: "5",
        AGENT_PLATFORM_POOL_ADMISSION_WAIT_SECONDS: "0",
        AGENT_PLATFORM_POOL_MINUTE_SECONDS: "2"
      })).toEqual({ offline: 5, admission: 0, minute: 2 })
    }))

  it.effect("a word, a fraction, 0 or a negative number where it means nothing: refused, naming the variable", () =>
    Effect.gen(function*() {
      for (const value of ["abc", "1.5", "0", "-5"]) {
        yield* refused("AGENT_PLATFORM_MACHINE_OFFLINE_WAIT_SECONDS", value, "a positive integer")
        yield* refused("AGENT_PLATFORM_POOL_MINUTE_SECONDS", value, "a positive integer")
      }
      for (const value of ["abc", "1.5", "-1"]) {
        yield* refused("AGENT_PLATFORM_POOL_ADMISSION_WAIT_SECONDS", value, "an integer of 0 or more")
      }
    }))
})
