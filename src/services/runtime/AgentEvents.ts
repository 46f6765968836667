/**
 * The timeline as the API reads it: pages of events, and the live stream of
 * Server-Sent Events, `id:` the sequence, `event:` the kind, `data:` the event as JSON; merged
 * into it, the live output of the model (LiveOutput) as events without `id:`. A stream ends with
 * a `stream_closed` event once its caller's access is gone or the server stops (StreamAccess).
 */
import { Sse } from "effect/encoding"
import { Cause, Context, Duration, Effect, Latch, Layer, Queue, Stream } from "effect"
import type { AgentId, OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { type AgentEvent, DEFAULT_EVENTS_LIMIT, type EventsQuery } from "../../domain/runtime/Events.ts"
import { InvalidRequest } from "../../domain/shared/Errors.ts"
import type { CurrentPrincipal } from "../../domain/tenancy/Principal.ts"
import { encodeOutputDelta, OUTPUT_DELTA_EVENTS, type OutputDelta } from "../../domain/runtime/OutputDeltas.ts"
import { AgentAccess } from "./AgentAccess.ts"
import { LiveOutput } from "./LiveOutput.ts"
import { type StreamClosed, StreamAccess } from "./StreamAccess.ts"
import type { AgentRef } from "./AgentEventsRepository.ts"
import { Timeline } from "./Timeline.ts"

/** A Server-Sent Events stream sends this comment when no event came for this long. */
export const SSE_HEARTBEAT_INTERVAL = Duration.seconds(15)

/**
 * An event's JSON, as its schema would encode it: the timeline's events are the schema's decoded
 * values (Timeline decodes every row it appends or reads, which keeps their fields and only them),
 * all JSON values but `created_at`, a Date, whose JSON is the ISO string the schema writes. So
 * `JSON.stringify` writes it, in a quarter of the time encoding with the schema took
 * (docs/performance-record.md). test/runtime/AgentEvents.test.ts checks the stream against the schema's
 * encoding for every kind of event.
 */
const eventJson = (event: AgentEvent): string => JSON.stringify(event)

const toServerSentEvent = (event: AgentEvent) =>
  Sse.encoder.write({ _tag: "Event", id: String(event.sequence), event: event.event_kind, data: eventJson(event) })

/** The last frame of a stream that had to end: no `id:`, so a reconnect resumes where the events stopped. */
const closedEvent = (closed: StreamClosed) =>
  Sse.encoder.write({ _tag: "Event", id: undefined, event: "stream_closed", data: JSON.stringify(closed) })

/** Not part of the timeline: no `id:`, so a client's Last-Event-ID stays the last stored event's. */
const toDeltaEvent = (delta: OutputDelta) => `event: ${OUTPUT_DELTA_EVENTS[delta.kind]}\ndata: ${encodeOutputDelta(delta)}\n\n`

/** An SSE comment line: ignored by clients, it keeps the connection (and proxies) awake. */
const comment = (text: string) => `: ${text}\n\n`

/**
 * What one stream holds for its client, in characters of its text (a byte each for ASCII, which
 * events' JSON mostly is; a JavaScript string takes one or two bytes a character, its UTF-8 up to
 * three): the frames queued plus the chunk being written, until the socket took it (the response
 * pulls its next chunk after the last one drained). Past it, the timeline waits for the client
 * (no event is lost, reordered or repeated) and live output is dropped (it is never replayed
 * anyway). A frame larger than this goes alone, once nothing else is held. 1 MiB: several of the
 * largest inputs (300 KB), thousands of deltas or small events, more than a reading client takes
 * in one write, and 1,000 stalled streams hold 1 GiB at most (plus the piece each waits to queue,
 * PIECE_CHARS; no page of events: see `stream`). It had been 1,024 frames, each a page of up to
 * 100 events: GBs for one stalled stream of large events.
 */
export const STREAM_BUFFERED_CHARS = 1024 * 1024

/**
 * A page's frames are queued in pieces of about this size (a larger event is a piece alone), so
 * a page of large events is not one string of its whole size, copied whole on its way out.
 */
const PIECE_CHARS = STREAM_BUFFERED_CHARS / 4

/** The most events one read of a stream takes: a page of `GET /events`' default size. */
const STREAM_PAGE_EVENTS = DEFAULT_EVENTS_LIMIT

/**
 * What one read of a stream aims at, in characters of the frames it makes: the next read takes
 * this over the mean frame of the read before, from 1 to STREAM_PAGE_EVENTS events. Frames of up
 * to 2,600 characters (events of a few hundred: outputs, tool calls, a turn's start and end)
 * still come a full page a read, so catching up on them costs no more reads; inputs of 300 KB
 * come one a read, so a read holds about this much rather than 100 of them (30 MB).
 */
const STREAM_PAGE_CHARS = STREAM_BUFFERED_CHARS / 4

/**
 * The events the first read of a stream takes, before it has seen how large the agent's events
 * are: 3 MB of 300 KB inputs rather than 30 MB, for one read more when a stream catches up on
 * more than this many events.
 */
const STREAM_FIRST_PAGE_EVENTS = 10

/** The limit of the read after one whose frames were `meanFrameChars` long on average (STREAM_PAGE_CHARS). */
const nextPageEvents = (meanFrameChars: number) =>
  Math.min(STREAM_PAGE_EVENTS, Math.max(1, Math.floor(STREAM_PAGE_CHARS / meanFrameChars)))

/**
 * Where a stream starts: after `sequence`, as the client named it, by its `Last-Event-ID` header
 * or its `after_sequence` parameter (0, from the beginning, when it named none).
 */
export interface StreamStart {
  readonly after: number
  readonly namedBy: "last-event-id" | "after_sequence"
}

/**
 * A stream may start after any event of the agent's timeline, and no further: the events are
 * streamed once committed, so no client received an id past the last sequence (read once the
 * request arrived). A start past it would wait for sequences that then come unseen (events
 * numbered up to it, committed later, skipped) or never come at all.
 */
const checkStart = (start: StreamStart, lastSequence: number) => {
  if (start.after <= lastSequence) return Effect.void
  const [name, retry] = start.namedBy === "last-event-id"
    ? ["Last-Event-ID", "an id the stream sent"]
    : ["after_sequence", "a sequence received"]
  return Effect.fail(
    new InvalidRequest({
      error: `${name} ${start.after} is past the agent's last event, ${lastSequence}: ` +
        `resume from ${retry}, or without ${name} to start from the beginning`,
      issues: [{ path: `/${start.namedBy}`, message: `is past the agent's last event, ${lastSequence}` }]
    })
  )
}

/** What one stream holds for its client: the frames its sources queue, and the chunk of them being written. */
const makeFrameBuffer = Effect.map(Queue.unbounded<string, Cause.Done>(), (frames) => {
  // Characters queued or in the chunk being written (STREAM_BUFFERED_CHARS); `room` opens when they drop.
  let held = 0
  let writing = 0
  const room = Latch.makeUnsafe(true)
  const fits = (size: number) => held === 0 || held + size <= STREAM_BUFFERED_CHARS
  const put = (frame: string) => {
    held += frame.length
    Queue.offerUnsafe(frames, frame)
  }
  /** Live output: dropped past the bound, even when nothing is held (it is never replayed anyway). */
  const putIfRoom = (frame: string) => {
    if (held + frame.length <= STREAM_BUFFERED_CHARS) put(frame)
  }
  const roomFor = (size: number): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (fits(size)) return Effect.void
      room.closeUnsafe()
      return Effect.andThen(room.await, roomFor(size))
    })
  // The response asks for its next chunk once the last one drained: what it held is gone.
  const nextChunk = Effect.suspend(() => {
    if (writing > 0) {
      held -= writing
      writing = 0
      room.openUnsafe()
    }
    return Effect.map(Queue.takeAll(frames), (waiting) => {
      const chunk = waiting.join("")
      writing = chunk.length
      return [chunk] as const
    })
  })
  return { frames, fits, put, putIfRoom, roomFor, nextChunk } as const
})

type FrameBuffer = Effect.Success<typeof makeFrameBuffer>

/**
 * Queues the events' frames in pieces (PIECE_CHARS) while they fit, and stops at the first
 * piece that does not: that piece, or the last, is left to be queued once there is room,
 * `last` the sequence of its last event, and the events after it are dropped (read again).
 */
const queuePage = (buffer: FrameBuffer, events: ReadonlyArray<AgentEvent>) => {
  let piece = ""
  let taken = 0
  let chars = 0
  for (const event of events) {
    const frame = toServerSentEvent(event)
    if (piece.length > 0 && piece.length + frame.length > PIECE_CHARS) {
      if (!buffer.fits(piece.length)) break
      buffer.put(piece)
      piece = ""
    }
    piece += frame
    taken++
    chars += frame.length
  }
  return { piece, last: events[taken - 1].sequence, meanFrameChars: chars / taken }
}

/** The response ends when its stream fails, as when it ends: without this line nothing would say why. */
const logFailure = (agentId: AgentId) =>
  Stream.tapCause((cause) =>
    Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logWarning(`The event stream of ${agentId} failed`, cause)
  )

const make = Effect.gen(function*() {
  const agentAccess = yield* AgentAccess
  const timeline = yield* Timeline
  const streamAccess = yield* StreamAccess
  const live = yield* LiveOutput

  /** A page of events as JSON text (`EventsPage`): the handler sends it as it is. */
  const list = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: EventsQuery) =>
    Effect.flatMap(agentAccess.read(orgId, projectId, agentId), (agent) => timeline.listJson(agent, query))

  /** The agent's row, once the start is checked against its timeline and the stream admitted (StreamAccess). */
  const admit = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, start: StreamStart) =>
    agentAccess.readRow(orgId, projectId, agentId).pipe(
      Effect.tap((agent) => checkStart(start, agent.last_sequence)),
      Effect.tap(streamAccess.admit)
    )

  /** Queues the timeline after the start's sequence, page after page as there is room, a heartbeat when no event came. */
  const sendTimeline = (buffer: FrameBuffer, agent: AgentRef, start: StreamStart) =>
    Effect.gen(function*() {
      let after = start.after
      let limit = STREAM_FIRST_PAGE_EVENTS
      // The characters the next page is expected to make: it is read once they fit, so that it is queued whole.
      let expected = 0
      while (true) {
        if (!buffer.fits(expected)) yield* buffer.roomFor(expected)
        // The page is queued as it is read: only what it left waits here, not its events.
        const queued = yield* Effect.map(
          timeline.waitForEvents(agent, after, SSE_HEARTBEAT_INTERVAL, limit),
          (events) => events.length === 0 ? undefined : queuePage(buffer, events)
        )
        if (queued === undefined) {
          const heartbeat = comment("heartbeat")
          if (!buffer.fits(heartbeat.length)) yield* buffer.roomFor(heartbeat.length)
          buffer.put(heartbeat)
          continue
        }
        if (!buffer.fits(queued.piece.length)) yield* buffer.roomFor(queued.piece.length)
        buffer.put(queued.piece)
        after = queued.last
        limit = nextPageEvents(queued.meanFrameChars)
        expected = limit * queued.meanFrameChars
      }
    })

  /** Once the caller's access is gone (or the server stops): the `stream_closed` frame, the last. */
  const closeWhenAccessLost = (buffer: FrameBuffer, orgId: OrgId, projectId: ProjectId, agentId: AgentId) =>
    streamAccess.lost(orgId, projectId, agentId).pipe(
      Effect.flatMap((closed) => Effect.sync(() => buffer.put(closedEvent(closed)))),
      Effect.andThen(Queue.end(buffer.frames))
    )

  /**
   * The timeline after the start's sequence as Server-Sent Events, then live (a start past the
   * agent's last event is `invalid_request`, `checkStart`), until the client
   * leaves: a comment opens the stream (so the response starts at once), one comment more
   * after each SSE_HEARTBEAT_INTERVAL without events. The live output of the agent's model calls
   * is merged in from the moment the stream opens. It ends with a `stream_closed` event when
   * the caller's access ends (its key deleted, its membership gone, the project deleted) or
   * the server stops.
   *
   * The three sources put their frames in one queue the response reads (a `Stream.merge` of
   * them cost about as much CPU as the rest of the stream, docs/performance-record.md): the timeline
   * and the access check from fibers of their own, the live output from its listener. Frames
   * that wait together go out in one write, so the events of one wake-up (committed together,
   * such as a turn's output and its end) do. What waits is bounded in characters
   * (STREAM_BUFFERED_CHARS), so is that write.
   *
   * The timeline is read in pages sized by the frames of the page before (STREAM_PAGE_CHARS), and
   * the next is read once there is room for it. A page is queued while it fits; what does not
   * (events larger than the page before's, or the first page) is dropped, not held while the
   * client is waited for, and read again after the last event queued: a stream waiting for its
   * client holds its frames and one piece, never a page of events.
   */
  const stream = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, start: StreamStart) =>
    Effect.zipWith(
      admit(orgId, projectId, agentId, start),
      Effect.context<CurrentPrincipal>(),
      (agent, context) =>
        Stream.unwrap(Effect.gen(function*() {
          const buffer = yield* makeFrameBuffer
          buffer.put(comment(`events of ${agentId} after sequence ${start.after}`))
          yield* live.subscribe(agentId, (delta) => buffer.putIfRoom(toDeltaEvent(delta)))
          yield* Effect.forkScoped(Queue.into(sendTimeline(buffer, agent, start), buffer.frames))
          yield* closeWhenAccessLost(buffer, orgId, projectId, agentId).pipe(Effect.provide(context), Effect.forkScoped)
          return Stream.fromPull(Effect.succeed(buffer.nextChunk))
        })).pipe(logFailure(agentId), Stream.encodeText)
    )

  return { list, stream, closeStreamsAtShutdown: streamAccess.closeAtShutdown } as const
})

export class AgentEvents extends Context.Service<AgentEvents, Effect.Success<typeof make>>()("AgentEvents") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      AgentAccess.layer,
      Timeline.layer,
      StreamAccess.layer,
      LiveOutput.layer
    ])
  )
}
