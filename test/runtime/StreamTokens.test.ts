/**
 * Stream tokens for a browser's EventSource: minted by an authenticated POST, accepted as
 * `?stream_token=` on that agent's event stream only; an expired, forged or other agent's token,
 * or one whose minting key was deleted, is 401. (Lifetime shortened to 2 s here; 5 min by default.)
 */
import { HttpClientRequest } from "effect/http"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import type { AgentId } from "../../src/domain/shared/Ids.ts"
import { StreamTokenLifetime } from "../../src/services/runtime/StreamTokens.ts"
import { Timeline } from "../../src/services/runtime/Timeline.ts"
import { agentProject } from "../support/AgentProject.ts"
import { openEventStream } from "../support/EventStreamClient.ts"
import { sleepLive } from "../support/Polling.ts"
import { clientWith, rawRequest, TestAppLive } from "../support/TestApp.ts"

const LIFETIME = Duration.seconds(2)

const appendOutputs = (agentId: AgentId, texts: ReadonlyArray<string>) =>
  Effect.flatMap(Timeline, (timeline) =>
    timeline.append(
      agentId,
      texts.map((text) => ({
        event_kind: "model_output" as const,
        turn_id: null,
        is_opening_event: false,
        content_blocks: [{ type: "text" as const, text }]
      }))
    ))

const setUp = Effect.gen(function*() {
  const setup = yield* agentProject({ label: "StreamTokens" })
  const agent = yield* setup.launch()
  const other = yield* setup.launch()
  const agentPath = { ...setup.projectPath, agentID: agent.id }
  const streamPath = (agentId: AgentId, token: string) =>
    `/v1/orgs/${setup.org.id}/projects/${setup.project.id}/agents/${agentId}/events/stream?stream_token=${encodeURIComponent(token)}`
  /** The stream opened with the token and no Authorization header: the status and error of a refusal. */
  const refusal = (agentId: AgentId, token: string) =>
    Effect.gen(function*() {
      const response = yield* rawRequest(HttpClientRequest.get(streamPath(agentId, token)))
      return { status: response.status, code: response.json?.code, error: String(response.json?.error) }
    })
  return { ...setup, agent, other, agentPath, streamPath, refusal }
})

layer(TestAppLive().pipe(Layer.provide(Layer.succeed(StreamTokenLifetime, LIFETIME))), {
  timeout: "60 seconds",
  excludeTestServices: true
})("stream tokens", (it) => {
  it.effect("a minted token opens the agent's stream without an Authorization header", () =>
    Effect.gen(function*() {
      const { agent, agentPath, owner, streamPath } = yield* setUp
      yield* appendOutputs(agent.id, ["a", "b"])
      const before = Date.now()
      const minted = yield* owner.client.agents.mintStreamToken({ params: agentPath })
      expect(minted.token).toMatch(/^st1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
      expect(minted.expires_at.getTime()).toBeGreaterThanOrEqual(before + Duration.toMillis(LIFETIME) - 1000)
      expect(minted.expires_at.getTime()).toBeLessThanOrEqual(Date.now() + Duration.toMillis(LIFETIME) + 1000)

      const stream = yield* openEventStream(streamPath(agent.id, minted.token), undefined, { "last-event-id": "1" })
      expect(stream.status).toBe(200)
      expect(stream.headers["content-type"]).toContain("text/event-stream")
      yield* appendOutputs(agent.id, ["c"])
      expect((yield* stream.events(2)).map((event) => event.id)).toEqual(["2", "3"])
      // An open stream outlives the token's lifetime: only opening needs a valid token.
      yield* sleepLive(Duration.sum(LIFETIME, Duration.millis(500)))
      yield* appendOutputs(agent.id, ["d"])
      expect((yield* stream.events(3)).map((event) => event.id)).toEqual(["2", "3", "4"])
      yield* stream.drop
    }))

  it.effect("expired, forged, malformed and other agents' tokens are 401; the token works on no other route", () =>
    Effect.gen(function*() {
      const { agent, agentPath, org, other, owner, project, refusal, streamPath } = yield* setUp
      const minted = yield* owner.client.agents.mintStreamToken({ params: agentPath })
      const [prefix, payload, signature] = minted.token.split(".")
      const flipped = signature.slice(0, -2) + (signature.endsWith("AA") ? "BB" : "AA")

      const forged = yield* refusal(agent.id, `${prefix}.${payload}.${flipped}`)
      expect(forged).toMatchObject({ status: 401, code: "unauthorized" })
      expect(forged.error).toContain("signature")
      // A payload naming the other agent under the original signature is forged too.
      const swapped = Buffer.from(
        Buffer.from(payload, "base64url").toString("utf8").replace(agent.id, other.id)
      ).toString("base64url")
      expect((yield* refusal(other.id, `${prefix}.${swapped}.${signature}`)).status).toBe(401)
      for (const garbage of ["abc", "st1.e30.", "st1..", `${minted.token}.x`, "Bearer x"]) {
        expect(yield* refusal(agent.id, garbage), garbage).toMatchObject({ status: 401, code: "unauthorized" })
      }
      // Given twice (even the same valid token): 400, as any query parameter given twice.
      const twice = yield* rawRequest(
        HttpClientRequest.get(`${streamPath(agent.id, minted.token)}&stream_token=${encodeURIComponent(minted.token)}`)
      )
      expect([twice.status, twice.json]).toEqual([400, {
        code: "invalid_request",
        error: "stream_token: is given more than once; give it once",
        issues: [{ path: "/stream_token", message: "is given more than once; give it once" }]
      }])
      const otherAgent = yield* refusal(other.id, minted.token)
      expect(otherAgent).toMatchObject({ status: 401, code: "unauthorized" })
      expect(otherAgent.error).toContain("another agent")

      // Only the stream route takes it.
      const list = yield* rawRequest(HttpClientRequest.get(
        `/v1/orgs/${org.id}/projects/${project.id}/agents/${agent.id}/events?stream_token=${encodeURIComponent(minted.token)}`
      ))
      expect([400, 401]).toContain(list.status)
      const minting = yield* rawRequest(HttpClientRequest.post(
        `/v1/orgs/${org.id}/projects/${project.id}/agents/${agent.id}/events/stream-token?stream_token=${
          encodeURIComponent(minted.token)
        }`
      ))
      expect([400, 401]).toContain(minting.status)

      yield* sleepLive(Duration.sum(LIFETIME, Duration.millis(1200)))
      const expired = yield* refusal(agent.id, minted.token)
      expect(expired).toMatchObject({ status: 401, code: "unauthorized" })
      expect(expired.error).toContain("expired")
    }))

  it.effect("deleting the minting key: its token is 401, and the stream it opened ends", () =>
    Effect.gen(function*() {
      const { agent, agentPath, owner, refusal, streamPath } = yield* setUp
      const key = yield* owner.client.user.createApiKey({ payload: { name: "browser" } })
      const browserBackend = yield* clientWith(key.token)
      const minted = yield* browserBackend.agents.mintStreamToken({ params: agentPath })
      const stream = yield* openEventStream(streamPath(agent.id, minted.token), undefined)
      expect(stream.status).toBe(200)
      yield* appendOutputs(agent.id, ["a"])
      expect(yield* stream.events(1)).toHaveLength(1)

      yield* owner.client.user.deleteApiKey({ params: { keyID: key.id } })
      const refused = yield* refusal(agent.id, minted.token)
      expect(refused).toMatchObject({ status: 401, code: "unauthorized" })
      expect(refused.error).toContain("deleted")
      const endedAt = yield* stream.ended(6_000)
      expect(endedAt).toBeDefined()
      expect(stream.frames().at(-1)).toMatchObject({ event: "stream_closed" })
    }))

  it.effect("minting needs read access to the agent: another tenant gets 404, no credential 401", () =>
    Effect.gen(function*() {
      const { agentPath, org, project, agent } = yield* setUp
      const stranger = yield* agentProject({ label: "Stranger" })
      const denied = yield* Effect.flip(stranger.owner.client.agents.mintStreamToken({ params: agentPath }))
      expect(denied._tag).toBe("NotFound")
      const anonymous = yield* rawRequest(
        HttpClientRequest.post(`/v1/orgs/${org.id}/projects/${project.id}/agents/${agent.id}/events/stream-token`)
      )
      expect(anonymous.status).toBe(401)
    }))
})
