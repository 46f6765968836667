/**
 * An event stream whose client does not read holds at most STREAM_BUFFERED_CHARS of frames for
 * it (and the piece it waits to queue), not the timeline, nor the page of events it last read:
 * on an agent of large events, it reads no further than what it could queue, and keeps no event
 * it could not; once the client reads, it gets every event, once, in order.
 *
 * How a read is seen from outside: after the client stopped reading, the test rewrites the stored
 * events (a test's liberty: the server never changes an event). What the stream had queued (or
 * the sockets had taken) before goes out as it was; what it had read but dropped, or not read,
 * goes out rewritten, as read again afterwards.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { AgentId } from "../../src/domain/shared/Ids.ts"
import { DEFAULT_EVENTS_LIMIT } from "../../src/domain/runtime/Events.ts"
import { STREAM_BUFFERED_CHARS } from "../../src/services/runtime/AgentEvents.ts"
import { Timeline } from "../../src/services/runtime/Timeline.ts"
import { agentProject } from "../support/AgentProject.ts"
import { openEventStream, type ServerSentEvent } from "../support/EventStreamClient.ts"
import { sleepLive } from "../support/Polling.ts"
import { describeApp } from "../support/TestApp.ts"

/** An input-sized event (300 KB, as the audit's), its sequence first so each is told apart. */
const EVENT_CHARS = 300_000
const EVENTS = DEFAULT_EVENTS_LIMIT + 20

/**
 * The events a stalled stream may have sent as they were stored, fewer than half a page: those it
 * had queued (STREAM_BUFFERED_CHARS and the piece waiting: 4 or 5 here) and those the
 * connection's buffers had taken (the sockets' and the client's, about 3.5 MB on loopback: 16 in
 * all here, on either database). A stream that held the page it last read sent all of that page
 * (DEFAULT_EVENTS_LIMIT) so.
 */
const MAX_SENT_AS_STORED = DEFAULT_EVENTS_LIMIT / 2

const appendSized = (agentId: AgentId, from: number, count: number, chars: number) =>
  Effect.flatMap(Timeline, (timeline) =>
    timeline.append(
      agentId,
      Array.from({ length: count }, (_, i) => ({
        event_kind: "model_output" as const,
        turn_id: null,
        is_opening_event: false,
        content_blocks: [{ type: "text" as const, text: `${from + i}:${"x".repeat(chars)}` }]
      }))
    ))

const textOf = (frame: ServerSentEvent) => JSON.parse(frame.data!).content_blocks[0].text as string

describeApp()("agent events, a client that does not read", (it) => {
  it.effect("the stream keeps no event it could not queue; then the client gets every event once, in order", () =>
    Effect.gen(function*() {
      // A page of these (30 MB) is far more than the bound and the sockets' buffers together.
      expect(DEFAULT_EVENTS_LIMIT * EVENT_CHARS).toBeGreaterThan(10 * STREAM_BUFFERED_CHARS)
      const setup = yield* agentProject({ label: "Backpressure" })
      const agent = yield* setup.launch()
      for (let from = 1; from <= EVENTS; from += 20) yield* appendSized(agent.id, from, 20, EVENT_CHARS)
      const path = `/v1/orgs/${setup.org.id}/projects/${setup.project.id}/agents/${agent.id}/events/stream`

      const stream = yield* openEventStream(path, setup.owner.token, { "last-event-id": "0" })
      yield* stream.pause
      // Time for a stream that does not wait to read on (two pages take well under a second).
      yield* sleepLive("2 seconds")
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE agent_events
        SET data = jsonb_build_object('content_blocks', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'rewritten ' || sequence)))
        WHERE agent_id = ${agent.id}`

      yield* stream.resume
      const received = yield* stream.events(EVENTS, 60_000)
      yield* sleepLive("300 millis")
      const frames = yield* stream.events(0)
      expect(frames.length).toBe(EVENTS)
      expect(frames.map((frame) => Number(frame.id))).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1))
      const texts = received.map(textOf)
      // The events queued before the rewrite, as stored then; every later one read again after it.
      const asStored = texts.findIndex((text) => text.startsWith("rewritten"))
      expect(asStored).toBeGreaterThan(0)
      expect(asStored).toBeLessThan(MAX_SENT_AS_STORED)
      texts.slice(0, asStored).forEach((text, i) => expect(text.startsWith(`${i + 1}:x`), `event ${i + 1}`).toBe(true))
      expect(texts.slice(asStored)).toEqual(Array.from({ length: EVENTS - asStored }, (_, i) => `rewritten ${asStored + i + 1}`))
      yield* stream.drop
    }), { timeout: 120_000 })

  it.effect("a client that reads in spurts, on events of mixed sizes, gets every event once, in order, as stored", () =>
    Effect.gen(function*() {
      const setup = yield* agentProject({ label: "Backpressure mixed" })
      const agent = yield* setup.launch()
      // Runs of small events (full pages) between runs of large ones (a page of them is dropped
      // but for what fits, and the pages after are small), and back.
      const runs = [[150, 200], [30, EVENT_CHARS], [150, 200], [12, EVENT_CHARS], [40, 5_000], [150, 200]] as const
      let from = 1
      for (const [count, chars] of runs) {
        yield* appendSized(agent.id, from, count, chars)
        from += count
      }
      const events = from - 1
      const path = `/v1/orgs/${setup.org.id}/projects/${setup.project.id}/agents/${agent.id}/events/stream`
      const stream = yield* openEventStream(path, setup.owner.token, { "last-event-id": "0" })
      const deadline = Date.now() + 60_000
      while ((yield* stream.events(0)).length < events && Date.now() < deadline) {
        yield* stream.pause
        yield* sleepLive("150 millis")
        yield* stream.resume
        yield* sleepLive("20 millis")
      }
      yield* sleepLive("300 millis")
      const received = yield* stream.events(0)
      expect(received.map((frame) => Number(frame.id))).toEqual(Array.from({ length: events }, (_, i) => i + 1))
      received.forEach((frame, i) => expect(textOf(frame).startsWith(`${i + 1}:x`), `event ${i + 1}`).toBe(true))
      yield* stream.drop
    }), { timeout: 120_000 })
})
