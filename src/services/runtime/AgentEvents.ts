/**
 * The timeline as the API reads it: pages of events, and the live stream of
 * Server-Sent Events, `id:` the sequence, `event:` the kind, `data:` the event as JSON; merged
 * into it, the live output of the model (LiveOutput) as events without `id:`. A stream ends with
 * a `stream_closed` event once its caller's access is gone or the server stops (StreamAccess).
 */
import { Sse } from "effect/encoding"
import { Cause, Context, Duration, Effect, Layer, Queue, Schema, Stream } from "effect"
import type { AgentId, OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import type { AgentEvent, EventsQuery } from "../../domain/runtime/Events.ts"
import type { CurrentPrincipal } from "../../domain/tenancy/Principal.ts"
import { OUTPUT_DELTA_EVENTS, OutputDelta } from "../../domain/runtime/OutputDeltas.ts"
import { AgentAccess } from "./AgentAccess.ts"
import { LiveOutput } from "./LiveOutput.ts"
import { type StreamClosed, StreamAccess } from "./StreamAccess.ts"
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

const encodeDelta = Schema.encodeSync(Schema.fromJsonString(OutputDelta))

/** Not part of the timeline: no `id:`, so a client's Last-Event-ID stays the last stored event's. */
const toDeltaEvent = (delta: OutputDelta) => `event: ${OUTPUT_DELTA_EVENTS[delta.kind]}\ndata: ${encodeDelta(delta)}\n\n`

/** An SSE comment line: ignored by clients, it keeps the connection (and proxies) awake. */
const comment = (text: string) => `: ${text}\n\n`

/**
 * Frames a stream holds for a client that reads slower than they come: when they are full, the
 * timeline waits for the client and live output is dropped (it is never replayed anyway).
 */
const FRAMES_BUFFERED = 1024

const make = Effect.gen(function*() {
  const agentAccess = yield* AgentAccess
  const timeline = yield* Timeline
  const streamAccess = yield* StreamAccess
  const live = yield* LiveOutput

  /** A page of events as JSON text (`EventsPage`): the handler sends it as it is. */
  const list = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: EventsQuery) =>
    Effect.flatMap(agentAccess.read(orgId, projectId, agentId), (agent) => timeline.listJson(agent, query))

  /**
   * The timeline after `afterSequence` as Server-Sent Events, then live, until the client
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
   * such as a turn's output and its end) do.
   */
  const stream = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, afterSequence: number) =>
    Effect.zipWith(agentAccess.read(orgId, projectId, agentId), Effect.context<CurrentPrincipal>(), (agent, context) =>
      Stream.unwrap(Effect.gen(function*() {
        const frames = yield* Queue.make<string, Cause.Done>({ capacity: FRAMES_BUFFERED })
        Queue.offerUnsafe(frames, comment(`events of ${agentId} after sequence ${afterSequence}`))
        yield* live.subscribe(agentId, (delta) => Queue.offerUnsafe(frames, toDeltaEvent(delta)))
        const sendTimeline = Effect.gen(function*() {
          let after = afterSequence
          while (true) {
            const events = yield* timeline.waitForEvents(agent, after, SSE_HEARTBEAT_INTERVAL)
            if (events.length === 0) {
              yield* Queue.offer(frames, comment("heartbeat"))
            } else {
              yield* Queue.offer(frames, events.map(toServerSentEvent).join(""))
              after = events[events.length - 1].sequence
            }
          }
        })
        yield* Effect.forkScoped(Queue.into(sendTimeline, frames))
        yield* streamAccess.lost(orgId, projectId, agentId).pipe(
          Effect.flatMap((closed) => Queue.offer(frames, closedEvent(closed))),
          Effect.andThen(Queue.end(frames)),
          Effect.provide(context),
          Effect.forkScoped
        )
        return Stream.fromQueue(frames)
      })).pipe(
        Stream.mapArray((waiting) => [waiting.join("")]),
        // The response ends when its stream fails, as when it ends: without this line nothing would say why.
        Stream.tapCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logWarning(`The event stream of ${agentId} failed`, cause)
        ),
        Stream.encodeText
      ))

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
