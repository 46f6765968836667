/**
 * The timeline routes: list events (paging in both directions) and the Server-Sent
 * Events stream (resume without gap or repeat). Events are appended through the Timeline service
 * (the engine's way of writing them), so each test knows exactly which sequences exist.
 */
import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Duration, Effect, Schema } from "effect"
import { type AgentId, ArtifactId, EventId, InputId, InteractionId, ToolCallId, TurnId } from "../../src/domain/shared/Ids.ts"
import { AgentEvent, DEFAULT_EVENTS_LIMIT } from "../../src/domain/runtime/Events.ts"
import { SSE_HEARTBEAT_INTERVAL } from "../../src/services/runtime/AgentEvents.ts"
import { AgentEventsRepository } from "../../src/services/runtime/AgentEventsRepository.ts"
import { CATCH_UP_INTERVAL } from "../../src/services/runtime/EventNotifications.ts"
import { IdGenerator } from "../../src/services/shared/Ids.ts"
import { Timeline } from "../../src/services/runtime/Timeline.ts"
import { agentProject } from "../support/AgentProject.ts"
import { openEventStream } from "../support/EventStreamClient.ts"
import { eventually, sleepLive } from "../support/Polling.ts"
import { describeApp, rawRequest } from "../support/TestApp.ts"

/** Appends one `model_output` event per text; returns their sequences. */
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
    )).pipe(Effect.map((events) => events.map((event) => event.sequence)))

/**
 * Appends one `model_output` event as another process would with its notification lost: the
 * row only, no wake-up, no NOTIFY.
 */
const appendUnannounced = (agentId: AgentId, text: string) =>
  Effect.gen(function*() {
    const events = yield* AgentEventsRepository
    const id = yield* Effect.flatMap(IdGenerator, (ids) => ids.make(EventId))
    const data = { content_blocks: [{ type: "text", text }] }
    const row = { position: 1, id, turn_id: null, turn_offset: null, is_opening_event: false, event_kind: "model_output", data }
    yield* events.append(agentId, [row], null, null)
  }).pipe(Effect.provide(AgentEventsRepository.layer))

const setUp = Effect.gen(function*() {
  const setup = yield* agentProject({ label: "Events" })
  const agent = yield* setup.launch()
  const agentPath = { ...setup.projectPath, agentID: agent.id }
  const list = (query: { after_sequence?: number; before_sequence?: number; limit?: number }) =>
    setup.owner.client.agents.listEvents({ params: agentPath, query })
  const streamPath = `/v1/orgs/${setup.org.id}/projects/${setup.project.id}/agents/${agent.id}/events/stream`
  return { ...setup, agent, agentPath, list, streamPath }
})

const sequences = (page: { readonly data: ReadonlyArray<{ readonly sequence: number }> }) =>
  page.data.map((event) => event.sequence)

describeApp()("agent events", (it) => {
  it.effect("an agent without events: both directions return nothing at the request boundary", () =>
    Effect.gen(function*() {
      const { list } = yield* setUp
      expect(yield* list({})).toEqual({ data: [], next_after_sequence: 0, has_more: false, next_before_sequence: null })
      expect(yield* list({ after_sequence: 7 })).toEqual({
        data: [],
        next_after_sequence: 7,
        has_more: false,
        next_before_sequence: null
      })
      expect(yield* list({ before_sequence: 0 })).toEqual({
        data: [],
        next_after_sequence: 0,
        has_more: false,
        next_before_sequence: null
      })
      expect(yield* list({ before_sequence: 3 })).toEqual({
        data: [],
        next_after_sequence: 3,
        has_more: false,
        next_before_sequence: null
      })
    }))

  it.effect("forward pagination walks from the boundary to the present", () =>
    Effect.gen(function*() {
      const { agent, list } = yield* setUp
      expect(yield* appendOutputs(agent.id, ["a", "b", "c", "d", "e"])).toEqual([1, 2, 3, 4, 5])

      const all = yield* list({})
      expect(sequences(all)).toEqual([1, 2, 3, 4, 5])
      expect(all).toMatchObject({ next_after_sequence: 5, has_more: false, next_before_sequence: null })
      expect(all.data[0]).toMatchObject({
        event_kind: "model_output",
        agent_id: agent.id,
        org_id: agent.org_id,
        project_id: agent.project_id,
        agent_config_id: agent.agent_config_id,
        content_blocks: [{ type: "text", text: "a" }]
      })

      const first = yield* list({ limit: 2 })
      expect(sequences(first)).toEqual([1, 2])
      expect(first).toMatchObject({ next_after_sequence: 2, has_more: true, next_before_sequence: null })
      const second = yield* list({ after_sequence: first.next_after_sequence, limit: 2 })
      expect(sequences(second)).toEqual([3, 4])
      expect(second).toMatchObject({ next_after_sequence: 4, has_more: true, next_before_sequence: null })
      const third = yield* list({ after_sequence: second.next_after_sequence, limit: 2 })
      expect(sequences(third)).toEqual([5])
      expect(third).toMatchObject({ next_after_sequence: 5, has_more: false, next_before_sequence: null })
      // At the end: nothing, and the boundary comes back as next_after_sequence.
      const end = yield* list({ after_sequence: 5, limit: 2 })
      expect(end).toEqual({ data: [], next_after_sequence: 5, has_more: false, next_before_sequence: null })
      // after_sequence 0 is the beginning of the log.
      expect(sequences(yield* list({ after_sequence: 0, limit: 1 }))).toEqual([1])
      // New events appear to the next forward request.
      yield* appendOutputs(agent.id, ["f"])
      expect(sequences(yield* list({ after_sequence: end.next_after_sequence }))).toEqual([6])
    }))

  it.effect("backward pagination starts at the latest and walks to the beginning; before_sequence wins", () =>
    Effect.gen(function*() {
      const { agent, list } = yield* setUp
      yield* appendOutputs(agent.id, ["a", "b", "c", "d", "e"])

      const latest = yield* list({ before_sequence: 0, limit: 2 })
      expect(sequences(latest)).toEqual([4, 5])
      expect(latest).toMatchObject({ has_more: true, next_before_sequence: 4, next_after_sequence: 5 })
      const older = yield* list({ before_sequence: latest.next_before_sequence!, limit: 2 })
      expect(sequences(older)).toEqual([2, 3])
      expect(older).toMatchObject({ has_more: true, next_before_sequence: 2, next_after_sequence: 3 })
      const oldest = yield* list({ before_sequence: older.next_before_sequence!, limit: 2 })
      expect(sequences(oldest)).toEqual([1])
      // Nothing older remains: null.
      expect(oldest).toMatchObject({ has_more: false, next_before_sequence: null, next_after_sequence: 1 })
      const beyond = yield* list({ before_sequence: 1, limit: 2 })
      expect(beyond).toEqual({ data: [], next_after_sequence: 1, has_more: false, next_before_sequence: null })
      // Exactly the rest: no more, so null.
      const exact = yield* list({ before_sequence: 3, limit: 2 })
      expect(sequences(exact)).toEqual([1, 2])
      expect(exact).toMatchObject({ has_more: false, next_before_sequence: null })
      // A boundary past the end returns the latest events before it.
      expect(sequences(yield* list({ before_sequence: 100, limit: 2 }))).toEqual([4, 5])

      // before_sequence takes precedence over after_sequence.
      const both = yield* list({ after_sequence: 1, before_sequence: 0, limit: 2 })
      expect(sequences(both)).toEqual([4, 5])
      expect(both.next_before_sequence).toBe(4)
      const bothOlder = yield* list({ after_sequence: 4, before_sequence: 3 })
      expect(sequences(bothOlder)).toEqual([1, 2])
    }))

  it.effect(`limit is 1 to 500, default ${DEFAULT_EVENTS_LIMIT}; bad query values are invalid_request`, () =>
    Effect.gen(function*() {
      const { agent, list, owner, agentPath } = yield* setUp
      yield* appendOutputs(agent.id, Array.from({ length: DEFAULT_EVENTS_LIMIT + 5 }, (_, i) => `e${i}`))
      const page = yield* list({})
      expect(page.data.length).toBe(DEFAULT_EVENTS_LIMIT)
      expect(page).toMatchObject({ has_more: true, next_after_sequence: DEFAULT_EVENTS_LIMIT })
      expect((yield* list({ limit: 500 })).data.length).toBe(DEFAULT_EVENTS_LIMIT + 5)
      expect((yield* list({ limit: 1 })).data.length).toBe(1)
      const base = `/v1/orgs/${agentPath.orgID}/projects/${agentPath.projectID}/agents/${agent.id}/events`
      for (
        const [query, field] of [
          ["limit=0", "/limit"],
          ["limit=501", "/limit"],
          ["limit=2.5", "/limit"],
          ["after_sequence=-1", "/after_sequence"],
          ["before_sequence=abc", "/before_sequence"]
        ] as const
      ) {
        const response = yield* rawRequest(
          HttpClientRequest.get(`${base}?${query}`).pipe(HttpClientRequest.bearerToken(owner.token))
        )
        expect(response.status, query).toBe(400)
        expect(response.json).toMatchObject({ code: "invalid_request", issues: [{ path: field }] })
      }
    }))

  it.effect("SSE: id = sequence, event = kind, data = the event; resumes after a dropped connection", () =>
    Effect.gen(function*() {
      const { agent, list, owner, streamPath } = yield* setUp
      yield* appendOutputs(agent.id, ["a", "b", "c"])

      const first = yield* openEventStream(streamPath, owner.token)
      expect(first.status).toBe(200)
      expect(first.headers["content-type"]).toContain("text/event-stream")
      expect(first.headers["cache-control"]).toBe("no-cache")
      const initial = yield* first.events(3)
      expect(initial.map((frame) => frame.id)).toEqual(["1", "2", "3"])
      expect(initial.every((frame) => frame.event === "model_output")).toBe(true)
      const listed = yield* list({})
      expect(initial.map((frame) => JSON.parse(frame.data!))).toEqual(
        listed.data.map((event) => ({ ...event, created_at: event.created_at.toISOString() }))
      )
      // Live: an event appended while connected arrives.
      yield* appendOutputs(agent.id, ["d"])
      const live = yield* first.events(4)
      expect(live.map((frame) => frame.id)).toEqual(["1", "2", "3", "4"])
      yield* first.drop

      // Events appended while disconnected.
      yield* appendOutputs(agent.id, ["e", "f"])
      const lastSeen = live[live.length - 1].id!
      const resumed = yield* openEventStream(streamPath, owner.token, { "last-event-id": lastSeen })
      const rest = yield* resumed.events(2)
      yield* appendOutputs(agent.id, ["g"])
      const afterLive = yield* resumed.events(3)
      expect(afterLive.map((frame) => frame.id)).toEqual(["5", "6", "7"])
      expect(afterLive.map((frame) => JSON.parse(frame.data!).content_blocks[0].text)).toEqual(["e", "f", "g"])
      expect(rest.length).toBeGreaterThanOrEqual(2)
      // Nothing more than that arrived (no repeat).
      yield* sleepLive("200 millis")
      expect((yield* resumed.events(0)).length).toBe(3)
      yield* resumed.drop
    }))

  it.effect("a page sends every kind of event as the stream does, field for field", () =>
    Effect.gen(function*() {
      const { agent, owner, streamPath } = yield* setUp
      const timeline = yield* Timeline
      const id = <A>(schema: Schema.Codec<A, string>, prefix: string, letter: string) =>
        Schema.decodeSync(schema)(`${prefix}_${letter.repeat(26)}`)
      const turnId = id(TurnId, "turn", "t")
      const toolCallId = id(ToolCallId, "tcl", "c")
      const inTurn = { turn_id: turnId, is_opening_event: false }
      const blocks = [
        { type: "text" as const, text: "answer, with ünïcode and \"quotes\"", metadata: { source: "test" } },
        { type: "reasoning_summary" as const, text: "thought" },
        {
          type: "media_ref" as const,
          artifact_id: id(ArtifactId, "art", "a"),
          media_type: "image/png",
          size_bytes: 68,
          sha256: "0".repeat(64)
        }
      ]
      const appended = yield* timeline.append(agent.id, [
        {
          event_kind: "agent_input",
          turn_id: turnId,
          is_opening_event: true,
          agent_input_id: id(InputId, "inp", "i"),
          input_kind: "content",
          content_blocks: [{ type: "text", text: "question" }],
          actor_id: null,
          input_idempotency_key: "key-1"
        },
        { event_kind: "turn", ...inTurn, turn_status: "started", error: null, usage: null },
        { event_kind: "model_output", ...inTurn, content_blocks: blocks },
        {
          event_kind: "tool_call",
          ...inTurn,
          tool_call_id: toolCallId,
          tool_name: "lookup",
          tool_type: "custom",
          tool_input: { query: "x", limit: 2.5, nested: { list: [1, "two", null, true] } }
        },
        { event_kind: "tool_result", ...inTurn, tool_call_id: toolCallId, outcome: "failed", content_blocks: blocks },
        {
          event_kind: "interaction",
          ...inTurn,
          interaction_id: id(InteractionId, "intr", "q"),
          interaction_kind: "question",
          interaction_status: "opened",
          tool_call_id: null,
          content_blocks: [{ type: "text", text: "which one?" }]
        },
        { event_kind: "control", turn_id: null, is_opening_event: false, control_type: "cancel_current", actor_id: null },
        {
          event_kind: "compaction",
          turn_id: null,
          is_opening_event: false,
          compacted_through_sequence: 2,
          content_blocks: [{ type: "text", text: "summary" }]
        },
        {
          event_kind: "turn",
          ...inTurn,
          turn_status: "completed",
          error: null,
          usage: { input_tokens: 10, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 1 }
        }
      ])
      const encoded = appended.map((event) => Schema.encodeSync(AgentEvent)(event))

      const page = yield* rawRequest(
        HttpClientRequest.get(`${streamPath.slice(0, -"/stream".length)}?limit=500`).pipe(
          HttpClientRequest.bearerToken(owner.token)
        )
      )
      expect(page.status).toBe(200)
      expect(page.headers["content-type"]).toContain("application/json")
      expect((page.json as { data: ReadonlyArray<unknown> }).data).toEqual(encoded)
      // The columns come first, in the order of the event's fields.
      expect(Object.keys((page.json as { data: ReadonlyArray<object> }).data[0]).slice(0, 11)).toEqual(
        Object.keys(encoded[0]).slice(0, 11)
      )

      const stream = yield* openEventStream(streamPath, owner.token)
      const frames = yield* stream.events(encoded.length)
      expect(frames.map((frame) => JSON.parse(frame.data!))).toEqual(encoded)
      yield* stream.drop
    }))

  it.effect("SSE: after_sequence resumes too; Last-Event-ID wins over it, unless empty; a bad Last-Event-ID is 400", () =>
    Effect.gen(function*() {
      const { agent, owner, streamPath } = yield* setUp
      yield* appendOutputs(agent.id, ["a", "b", "c", "d"])
      const byQuery = yield* openEventStream(`${streamPath}?after_sequence=2`, owner.token)
      expect((yield* byQuery.events(2)).map((frame) => frame.id)).toEqual(["3", "4"])
      yield* byQuery.drop
      const both = yield* openEventStream(`${streamPath}?after_sequence=1`, owner.token, { "last-event-id": "3" })
      expect((yield* both.events(1)).map((frame) => frame.id)).toEqual(["4"])
      yield* sleepLive("100 millis")
      expect((yield* both.events(0)).length).toBe(1)
      // The stream opens with a comment, so headers arrive at once even when nothing is new.
      expect(both.frames()[0].comment).toBeDefined()
      yield* both.drop
      // An empty Last-Event-ID is no id: after_sequence counts.
      const empty = yield* openEventStream(`${streamPath}?after_sequence=2`, owner.token, { "last-event-id": "" })
      expect((yield* empty.events(2)).map((frame) => frame.id)).toEqual(["3", "4"])
      yield* empty.drop
      const bad = yield* rawRequest(
        HttpClientRequest.get(streamPath).pipe(
          HttpClientRequest.bearerToken(owner.token),
          HttpClientRequest.setHeader("last-event-id", "nope")
        )
      )
      expect(bad.status).toBe(400)
      expect(bad.json).toMatchObject({ code: "invalid_request" })
      const unauthenticated = yield* rawRequest(HttpClientRequest.get(streamPath))
      expect(unauthenticated.status).toBe(401)
    }))

  it.effect("SSE: a Last-Event-ID or after_sequence past the agent's last event is 400 naming both; its last event's is valid", () =>
    Effect.gen(function*() {
      const { agent, owner, streamPath } = yield* setUp
      yield* appendOutputs(agent.id, ["a", "b", "c"])
      const open = (path: string, lastEventId?: string) =>
        rawRequest(
          HttpClientRequest.get(path).pipe(
            HttpClientRequest.bearerToken(owner.token),
            lastEventId === undefined ? (request) => request : HttpClientRequest.setHeader("last-event-id", lastEventId)
          )
        )
      for (const ahead of ["4", "9007199254740991"]) {
        const refused = yield* open(streamPath, ahead)
        expect(refused.status).toBe(400)
        expect(refused.json).toEqual({
          code: "invalid_request",
          error: `Last-Event-ID ${ahead} is past the agent's last event, 3: resume from an id the stream sent, ` +
            "or without Last-Event-ID to start from the beginning",
          issues: [{ path: "/last-event-id", message: "is past the agent's last event, 3" }]
        })
      }
      const byQuery = yield* open(`${streamPath}?after_sequence=7`)
      expect(byQuery.status).toBe(400)
      expect(byQuery.json).toEqual({
        code: "invalid_request",
        error: "after_sequence 7 is past the agent's last event, 3: resume from a sequence received, " +
          "or without after_sequence to start from the beginning",
        issues: [{ path: "/after_sequence", message: "is past the agent's last event, 3" }]
      })
      // The header wins: a valid one with a query past the end is a stream, and the reverse is refused.
      const headerWins = yield* openEventStream(`${streamPath}?after_sequence=7`, owner.token, { "last-event-id": "2" })
      expect(headerWins.status).toBe(200)
      expect((yield* headerWins.events(1)).map((frame) => frame.id)).toEqual(["3"])
      yield* headerWins.drop
      expect((yield* open(`${streamPath}?after_sequence=1`, "4")).status).toBe(400)

      // The last event's id is valid: the stream sends what comes next, the events the refused ids skipped included.
      const atEnd = yield* openEventStream(streamPath, owner.token, { "last-event-id": "3" })
      expect(atEnd.status).toBe(200)
      yield* appendOutputs(agent.id, ["d", "e"])
      expect((yield* atEnd.events(2)).map((frame) => frame.id)).toEqual(["4", "5"])
      yield* atEnd.drop
      // Once the agent's timeline has reached it, the id refused before is valid.
      const later = yield* openEventStream(streamPath, owner.token, { "last-event-id": "4" })
      expect(later.status).toBe(200)
      expect((yield* later.events(1)).map((frame) => frame.id)).toEqual(["5"])
      yield* later.drop
    }))

  it.effect("SSE: a heartbeat comment after 15 s without events, and events still flow after it", () =>
    Effect.gen(function*() {
      const { agent, owner, streamPath } = yield* setUp
      const stream = yield* openEventStream(streamPath, owner.token)
      const started = Date.now()
      yield* eventually(
        Effect.sync(() => stream.frames().map((frame) => frame.comment)),
        (comments) => comments.includes("heartbeat"),
        "a heartbeat",
        "30 seconds"
      )
      expect(Date.now() - started).toBeGreaterThanOrEqual(Duration.toMillis(SSE_HEARTBEAT_INTERVAL) - 1000)
      yield* appendOutputs(agent.id, ["after the heartbeat"])
      expect((yield* stream.events(1)).map((frame) => frame.id)).toEqual(["1"])
      yield* stream.drop
    }), { timeout: 50_000 })

  it.effect("SSE: an event whose wake-up never came still arrives, within the catch-up interval", () =>
    Effect.gen(function*() {
      const { agent, owner, streamPath } = yield* setUp
      yield* appendOutputs(agent.id, ["a"])
      const stream = yield* openEventStream(streamPath, owner.token)
      expect((yield* stream.events(1)).map((frame) => frame.id)).toEqual(["1"])

      yield* appendUnannounced(agent.id, "missed")
      const appendedAt = Date.now()
      const frames = yield* stream.events(2, Duration.toMillis(CATCH_UP_INTERVAL) + 3_000)
      expect(Date.now() - appendedAt).toBeLessThanOrEqual(Duration.toMillis(CATCH_UP_INTERVAL) + 2_000)
      expect(frames.map((frame) => frame.id)).toEqual(["1", "2"])
      expect(JSON.parse(frames[1].data!).content_blocks[0].text).toBe("missed")
      yield* stream.drop
    }), { timeout: 30_000 })
})
