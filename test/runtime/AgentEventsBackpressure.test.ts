/**
 * An event stream whose client does not read holds at most STREAM_BUFFERED_CHARS for it (and
 * the page it has read), not the timeline: on an agent of large events, the stream reads no
 * page past the one the client has not taken; once the client reads, it gets every event, once,
 * in order.
 *
 * How a page's read is seen from outside: after the client stopped reading, the test rewrites
 * the stored events of the second page (a test's liberty: the server never changes an event).
 * A stream that had already read them (it held up to 1,024 pages of frames) sends them as they
 * were; one that waited sends them rewritten.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { AgentId } from "../../src/domain/shared/Ids.ts"
import { DEFAULT_EVENTS_LIMIT } from "../../src/domain/runtime/Events.ts"
import { STREAM_BUFFERED_CHARS } from "../../src/services/runtime/AgentEvents.ts"
import { Timeline } from "../../src/services/runtime/Timeline.ts"
import { agentProject } from "../support/AgentProject.ts"
import { openEventStream } from "../support/EventStreamClient.ts"
import { sleepLive } from "../support/Polling.ts"
import { describeApp } from "../support/TestApp.ts"

/** An input-sized event (300 KB, as the audit's), its sequence first so each is told apart. */
const EVENT_CHARS = 300_000
const EVENTS = DEFAULT_EVENTS_LIMIT + 20

const appendLarge = (agentId: AgentId, from: number, count: number) =>
  Effect.flatMap(Timeline, (timeline) =>
    timeline.append(
      agentId,
      Array.from({ length: count }, (_, i) => ({
        event_kind: "model_output" as const,
        turn_id: null,
        is_opening_event: false,
        content_blocks: [{ type: "text" as const, text: `${from + i}:${"x".repeat(EVENT_CHARS)}` }]
      }))
    ))

describeApp()("agent events, a client that does not read", (it) => {
  it.effect("the stream reads no page past what the client has not taken; then the client gets every event once, in order", () =>
    Effect.gen(function*() {
      // A page of these (30 MB) is far more than the bound and the sockets' buffers together.
      expect(DEFAULT_EVENTS_LIMIT * EVENT_CHARS).toBeGreaterThan(10 * STREAM_BUFFERED_CHARS)
      const setup = yield* agentProject({ label: "Backpressure" })
      const agent = yield* setup.launch()
      for (let from = 1; from <= EVENTS; from += 20) yield* appendLarge(agent.id, from, 20)
      const path = `/v1/orgs/${setup.org.id}/projects/${setup.project.id}/agents/${agent.id}/events/stream`

      const stream = yield* openEventStream(path, setup.owner.token, { "last-event-id": "0" })
      yield* stream.pause
      // Time for a stream that does not wait to read on (two pages take well under a second).
      yield* sleepLive("2 seconds")
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE agent_events
        SET data = jsonb_build_object('content_blocks', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'rewritten ' || sequence)))
        WHERE agent_id = ${agent.id} AND sequence > ${DEFAULT_EVENTS_LIMIT}`

      yield* stream.resume
      const received = yield* stream.events(EVENTS, 60_000)
      yield* sleepLive("300 millis")
      const frames = yield* stream.events(0)
      expect(frames.length).toBe(EVENTS)
      expect(frames.map((frame) => Number(frame.id))).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1))
      const texts = received.map((frame) => JSON.parse(frame.data!).content_blocks[0].text as string)
      // The first page as stored then; the second read only once the client read the first.
      texts.slice(0, DEFAULT_EVENTS_LIMIT).forEach((text, i) => expect(text.startsWith(`${i + 1}:x`), `event ${i + 1}`).toBe(true))
      expect(texts.slice(DEFAULT_EVENTS_LIMIT)).toEqual(
        Array.from({ length: EVENTS - DEFAULT_EVENTS_LIMIT }, (_, i) => `rewritten ${DEFAULT_EVENTS_LIMIT + i + 1}`)
      )
      yield* stream.drop
    }), { timeout: 120_000 })
})
