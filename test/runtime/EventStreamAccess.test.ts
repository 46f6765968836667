/**
 * An open event stream does not outlive its access: deleting the key that opened it, removing
 * its member from the organization, deleting the agent's project, or the agent leaving the project
 * ends it within 5 s with a `stream_closed` event saying why; the events before are delivered, none
 * after. The other streams of the same key go on.
 */
import { expect } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { AgentId } from "../../src/domain/shared/Ids.ts"
import { Timeline } from "../../src/services/runtime/Timeline.ts"
import { agentProject } from "../support/AgentProject.ts"
import { type OpenStream, openEventStream } from "../support/EventStreamClient.ts"
import { sleepLive } from "../support/Polling.ts"
import { describeApp, joinOrganization, newUser } from "../support/TestApp.ts"

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
  const setup = yield* agentProject({ label: "StreamAccess" })
  const agent = yield* setup.launch()
  const streamPath = `/v1/orgs/${setup.org.id}/projects/${setup.project.id}/agents/${agent.id}/events/stream`
  return { ...setup, agent, streamPath }
})

/** The stream ends within 5 s of `revokedAt`, its last frame a `stream_closed` event with `reason`. */
const expectClosed = (stream: OpenStream, revokedAt: number, reason: string) =>
  Effect.gen(function*() {
    const endedAt = yield* stream.ended(6_000)
    expect(endedAt).toBeDefined()
    expect(endedAt! - revokedAt).toBeLessThanOrEqual(5_000)
    const last = stream.frames().at(-1)!
    expect(last.event).toBe("stream_closed")
    expect(last.id).toBeUndefined()
    const data = JSON.parse(last.data!) as { reason: string; message: string }
    expect(data.reason).toBe(reason)
    expect(typeof data.message).toBe("string")
    return data
  })

describeApp()("event stream access", (it) => {
  it.effect("deleting the key that opened a stream ends it within 5 s; events before were delivered", () =>
    Effect.gen(function*() {
      const { agent, owner, streamPath } = yield* setUp
      const key = yield* owner.client.user.createApiKey({ payload: { name: "stream" } })
      const stream = yield* openEventStream(streamPath, key.token)
      expect(stream.status).toBe(200)
      yield* appendOutputs(agent.id, ["a", "b", "c", "d"])
      expect((yield* stream.events(4)).map((event) => event.id)).toEqual(["1", "2", "3", "4"])

      yield* owner.client.user.deleteApiKey({ params: { keyID: key.id } })
      const revokedAt = Date.now()
      const closed = yield* expectClosed(stream, revokedAt, "api_key_revoked")
      expect(closed.message).toContain(key.id)

      // Nothing of what follows reaches the closed stream; the owner's own key still reads it all.
      yield* appendOutputs(agent.id, ["e", "f"])
      yield* sleepLive("300 millis")
      expect(stream.frames().filter((frame) => frame.id !== undefined)).toHaveLength(4)
      const again = yield* openEventStream(streamPath, key.token)
      expect(again.status).toBe(401)
      yield* again.drop
    }))

  it.effect("removing the member from the organization ends their stream within 5 s", () =>
    Effect.gen(function*() {
      const { agent, org, owner, streamPath } = yield* setUp
      const member = yield* newUser("reader")
      yield* joinOrganization(owner, org.id, member, "member")
      const stream = yield* openEventStream(streamPath, member.token)
      expect(stream.status).toBe(200)
      yield* appendOutputs(agent.id, ["a", "b"])
      expect(yield* stream.events(2)).toHaveLength(2)
      // The owner's stream on the same agent keeps going.
      const ownerStream = yield* openEventStream(streamPath, owner.token)

      yield* owner.client.members.remove({ params: { orgID: org.id, userID: member.user.id } })
      const revokedAt = Date.now()
      yield* expectClosed(stream, revokedAt, "access_revoked")

      yield* appendOutputs(agent.id, ["c"])
      expect((yield* ownerStream.events(3)).map((event) => event.id)).toEqual(["1", "2", "3"])
      expect(stream.frames().filter((frame) => frame.id !== undefined)).toHaveLength(2)
      expect(yield* ownerStream.ended(10)).toBeUndefined()
      yield* ownerStream.drop
    }))

  it.effect("deleting the agent's project ends the stream within 5 s", () =>
    Effect.gen(function*() {
      const { agent, org, owner, project, streamPath } = yield* setUp
      const stream = yield* openEventStream(streamPath, owner.token)
      yield* appendOutputs(agent.id, ["a"])
      expect(yield* stream.events(1)).toHaveLength(1)
      yield* owner.client.projects.remove({ params: { orgID: org.id, projectID: project.id } })
      yield* expectClosed(stream, Date.now(), "access_revoked")
    }))

  it.effect("an agent gone from its project ends its stream; the same key's stream on another agent goes on", () =>
    Effect.gen(function*() {
      const { agent, launch, owner, streamPath } = yield* setUp
      const other = yield* launch()
      const stream = yield* openEventStream(streamPath, owner.token)
      const otherStream = yield* openEventStream(streamPath.replace(agent.id, other.id), owner.token)
      expect([stream.status, otherStream.status]).toEqual([200, 200])

      // No route deletes an agent; its row going (as with its project's) is what the check sees.
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM agents WHERE id = ${agent.id}`
      const closed = yield* expectClosed(stream, Date.now(), "access_revoked")
      expect(closed.message).toContain(agent.id)

      yield* appendOutputs(other.id, ["a"])
      expect(yield* otherStream.events(1)).toHaveLength(1)
      expect(yield* otherStream.ended(10)).toBeUndefined()
      yield* otherStream.drop
    }))
})
