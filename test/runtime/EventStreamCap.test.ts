/**
 * An API key holds at most AGENT_PLATFORM_MAX_STREAMS_PER_KEY event streams open at once in a
 * process (2 here): past it `429 rate_limited`, a stream token counting as the key that minted it;
 * another key has its own; a stream dropped by its client gives its place back, and a refused
 * request takes none. The variable: unset 1,000, 0 no cap, anything else not a count refused.
 */
import { HttpClientRequest } from "effect/http"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { agentProject } from "../support/AgentProject.ts"
import { configFromEnv } from "../support/ConfigFromEnv.ts"
import { openEventStream } from "../support/EventStreamClient.ts"
import { eventually } from "../support/Polling.ts"
import { describeApp, joinOrganization, newUser, rawRequest } from "../support/TestApp.ts"

describeApp({ maxStreamsPerKey: Option.some(2) })("event streams a key holds open", (it) => {
  it.effect("a key's third stream is 429 rate_limited until one of its two closes; another key has its own", () =>
    Effect.gen(function*() {
      const { launch, org, owner, projectPath } = yield* agentProject({ label: "StreamCap" })
      const agent = yield* launch()
      const streamPath = `/v1/orgs/${org.id}/projects/${projectPath.projectID}/agents/${agent.id}/events/stream`
      const refusal = (path: string, token?: string) =>
        Effect.map(
          rawRequest(
            token === undefined ? HttpClientRequest.get(path) : HttpClientRequest.get(path).pipe(HttpClientRequest.bearerToken(token))
          ),
          (response) => ({ status: response.status, code: response.json?.code, error: String(response.json?.error) })
        )

      const first = yield* openEventStream(streamPath, owner.token)
      const second = yield* openEventStream(streamPath, owner.token)
      expect([first.status, second.status]).toEqual([200, 200])
      const third = yield* refusal(streamPath, owner.token)
      expect(third).toEqual({ status: 429, code: "rate_limited", error: expect.stringContaining("has 2 event streams open") })
      expect(third.error).toContain("AGENT_PLATFORM_MAX_STREAMS_PER_KEY")

      // A stream token acts as the key that minted it.
      const minted = yield* owner.client.agents.mintStreamToken({ params: { ...projectPath, agentID: agent.id } })
      expect(yield* refusal(`${streamPath}?stream_token=${encodeURIComponent(minted.token)}`)).toMatchObject({
        status: 429,
        code: "rate_limited"
      })

      // Another key's streams are its own.
      const member = yield* newUser("streams")
      yield* joinOrganization(owner, org.id, member, "admin")
      const members = yield* openEventStream(streamPath, member.token)
      expect(members.status).toBe(200)

      // A stream its client dropped gives its place back; the refused requests took none.
      yield* first.drop
      const reopened = yield* eventually(
        openEventStream(streamPath, owner.token),
        (stream) => stream.status === 200,
        "a place given back",
        "5 seconds"
      )
      expect((yield* refusal(streamPath, owner.token)).status).toBe(429)
      yield* Effect.forEach([second, reopened, members], (stream) => stream.drop)
    }))
})

const read = (env: Record<string, string>) =>
  Effect.map(configFromEnv(env), (config) => Option.getOrUndefined(config.maxStreamsPerKey))

describe("the streams-per-key setting", () => {
  it.effect("unset or empty: 1,000; a count; 0 is no cap; negative or fractional refused, naming the variable", () =>
    Effect.gen(function*() {
      expect(yield* read({})).toBe(1_000)
      expect(yield* read({ AGENT_PLATFORM_MAX_STREAMS_PER_KEY: "" })).toBe(1_000)
      expect(yield* read({ AGENT_PLATFORM_MAX_STREAMS_PER_KEY: "20" })).toBe(20)
      expect(yield* read({ AGENT_PLATFORM_MAX_STREAMS_PER_KEY: "0" })).toBeUndefined()
      for (const value of ["-1", "2.5", "many"]) {
        const error = yield* Effect.flip(read({ AGENT_PLATFORM_MAX_STREAMS_PER_KEY: value }))
        expect(String(error), value).toContain("AGENT_PLATFORM_MAX_STREAMS_PER_KEY")
      }
    }))
})
