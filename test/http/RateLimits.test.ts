/**
 * The rate of an API key (docs/api-conventions.md, "Rate limits"): a bucket of `burst` requests
 * refilled at `perSecond`, counted per key across every route and way of authenticating; the
 * `RateLimit-*` headers on each answer; past it `429 rate_limited` with `Retry-After`, without
 * touching other keys. Machine registration counts against the credential it registers with. The settings as read from the environment.
 */
import { HttpClientRequest } from "effect/http"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { configFromEnv } from "../support/ConfigFromEnv.ts"
import { describeApp, newUser, rawRequest } from "../support/TestApp.ts"

const AN_ID = "a".repeat(26)

const get = (token: string, path: string) => rawRequest(HttpClientRequest.get(path).pipe(HttpClientRequest.bearerToken(token)))

describeApp({ keyRate: Option.some({ perSecond: 1, burst: 3 }) })("a key's rate", (it) => {
  it.effect("a burst passes with the headers counting down; the next is 429 with Retry-After; another key is untouched", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const { token: other } = yield* newUser()
      const answers = [yield* get(token, "/v1/user"), yield* get(token, "/v1/user"), yield* get(token, "/v1/user")]
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200])
      expect(answers.map((answer) => answer.headers["ratelimit-limit"])).toEqual(["3", "3", "3"])
      expect(answers.map((answer) => answer.headers["ratelimit-remaining"])).toEqual(["2", "1", "0"])
      expect(Number(answers[2].headers["ratelimit-reset"])).toBeGreaterThanOrEqual(1)

      const refused = yield* get(token, "/v1/user")
      expect(refused.status).toBe(429)
      expect(refused.json).toEqual({
        code: "rate_limited",
        error: "Too many requests with this API key: it may send 1 a second and 3 at once; retry after 1 s (the Retry-After header)"
      })
      expect(refused.headers["retry-after"]).toBe("1")
      expect(refused.headers["ratelimit-remaining"]).toBe("0")

      const others = yield* get(other, "/v1/user")
      expect(others.status).toBe(200)
      expect(others.headers["ratelimit-remaining"]).toBe("2")

      // After Retry-After the key sends again (one request has come back at 1 a second).
      yield* Effect.sleep("1 second")
      expect((yield* get(token, "/v1/user")).status).toBe(200)
    }))

  it.effect("one bucket for the key on every route: the workspace routes, the event stream and machine registration count and refuse alike", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      const register = rawRequest(
        HttpClientRequest.post("/v1/machines/register").pipe(HttpClientRequest.bearerToken(token), HttpClientRequest.bodyJsonUnsafe({}))
      )
      expect((yield* get(token, "/api/v1/workspaces")).status).toBe(200)
      // Registration with the key reaches its handler: the body lacks the machine's facts.
      expect((yield* register).status).toBe(400)
      const stream = `/v1/orgs/org_${AN_ID}/projects/proj_${AN_ID}/agents/agt_${AN_ID}/events/stream`
      // The last of the burst reaches the stream's handler: no such agent.
      expect((yield* get(token, stream)).status).toBe(404)
      for (const path of ["/api/v1/workspaces", "/v1/user", stream]) {
        const refused = yield* get(token, path)
        expect(refused.status, path).toBe(429)
        expect(refused.json?.code, path).toBe("rate_limited")
      }
      const refused = yield* register
      expect(refused.status).toBe(429)
      expect(refused.headers["retry-after"]).toBe("1")
    }))

  it.effect("a request without a valid key is 401, not counted against anyone", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 5; i++) expect((yield* get("apk_not-a-key", "/v1/user")).status).toBe(401)
      const { token } = yield* newUser()
      expect((yield* get(token, "/v1/user")).headers["ratelimit-remaining"]).toBe("2")
    }))
})

describeApp({ keyRate: Option.none() })("no rate set", (it) => {
  it.effect("answers carry no RateLimit headers and nothing is refused", () =>
    Effect.gen(function*() {
      const { token } = yield* newUser()
      for (let i = 0; i < 20; i++) {
        const answer = yield* get(token, "/v1/user")
        expect(answer.status).toBe(200)
        expect(answer.headers["ratelimit-limit"]).toBeUndefined()
      }
    }))
})

const read = (env: Record<string, string>) => Effect.map(configFromEnv(env), (config) => Option.getOrUndefined(config.keyRate))

describe("rate limit settings", () => {
  it.effect("unset: 100 a second, bursts of 1,000; a rate alone bursts ten seconds of it; 0 is no limit", () =>
    Effect.gen(function*() {
      expect(yield* read({})).toEqual({ perSecond: 100, burst: 1_000 })
      expect(yield* read({ AGENT_PLATFORM_RATE_LIMIT_PER_SECOND: "" })).toEqual({ perSecond: 100, burst: 1_000 })
      expect(yield* read({ AGENT_PLATFORM_RATE_LIMIT_PER_SECOND: "20" })).toEqual({ perSecond: 20, burst: 200 })
      expect(yield* read({ AGENT_PLATFORM_RATE_LIMIT_PER_SECOND: "20", AGENT_PLATFORM_RATE_LIMIT_BURST: "5" }))
        .toEqual({ perSecond: 20, burst: 5 })
      expect(yield* read({ AGENT_PLATFORM_RATE_LIMIT_PER_SECOND: "0" })).toBeUndefined()
    }))

  it.effect("a negative or fractional rate, a burst of 0: refused, naming the variable", () =>
    Effect.gen(function*() {
      for (const [name, value] of [
        ["AGENT_PLATFORM_RATE_LIMIT_PER_SECOND", "-1"],
        ["AGENT_PLATFORM_RATE_LIMIT_PER_SECOND", "2.5"],
        ["AGENT_PLATFORM_RATE_LIMIT_BURST", "0"]
      ]) {
        const error = yield* Effect.flip(read({ [name]: value }))
        expect(String(error), value).toContain(name)
      }
    }))
})
