/**
 * The agent events stream for the typed client: `streamAgentEvents(options, path)` opens
 * `GET .../agents/{agentID}/events/stream` and yields its Server-Sent Events decoded: the stored
 * events of the timeline (`{ type: "event", event }`, resume after `event.sequence` with
 * `lastEventId`) and the live output of the model (`{ type: "delta", delta }`, never replayed).
 * Frames of kinds it does not know are skipped. The stream does not end by itself; interrupting
 * it closes the connection. A refused request fails with the HTTP client's HttpClientError (its
 * reason a StatusCodeError).
 */
import { Sse } from "effect/encoding"
import { HttpClient, HttpClientRequest } from "effect/http"
import { Effect, Filter, Option, Schema, Stream } from "effect"
import { AgentEvent } from "../domain/runtime/Events.ts"
import { OUTPUT_DELTA_EVENTS, OutputDelta } from "../domain/runtime/OutputDeltas.ts"
import type { AgentId, OrgId, ProjectId } from "../domain/shared/Ids.ts"

export type AgentStreamItem =
  | { readonly type: "event"; readonly event: AgentEvent }
  | { readonly type: "delta"; readonly delta: OutputDelta }

export interface AgentStreamOptions {
  readonly baseUrl?: string
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string
  /** Start after this sequence (the `id:` of the last stored event received). */
  readonly lastEventId?: number
}

export interface AgentStreamPath {
  readonly orgID: OrgId
  readonly projectID: ProjectId
  readonly agentID: AgentId
}

const decodeEvent = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.toCodecJson(AgentEvent)))
const decodeDelta = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.toCodecJson(OutputDelta)))
const deltaEvents: ReadonlyArray<string> = Object.values(OUTPUT_DELTA_EVENTS)

/** `stored`: the frame has an `id:` of its own (a stored event of the timeline). */
const itemOf = (frame: Sse.Event, stored: boolean) =>
  stored
    ? Effect.map(decodeEvent(frame.data), (event): Option.Option<AgentStreamItem> => Option.some({ type: "event", event }))
    : deltaEvents.includes(frame.event)
    ? Effect.map(decodeDelta(frame.data), (delta): Option.Option<AgentStreamItem> => Option.some({ type: "delta", delta }))
    : Effect.succeed(Option.none<AgentStreamItem>())

export const streamAgentEvents = (options: AgentStreamOptions, path: AgentStreamPath) =>
  Stream.unwrap(Effect.gen(function*() {
    const http = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
    const url = `${(options.baseUrl ?? "").replace(/\/+$/, "")}/v1/orgs/${path.orgID}/projects/${path.projectID}` +
      `/agents/${path.agentID}/events/stream`
    const request = HttpClientRequest.get(url).pipe(
      HttpClientRequest.setHeader("accept", "text/event-stream"),
      options.token === undefined ? (request) => request : HttpClientRequest.bearerToken(options.token),
      options.lastEventId === undefined
        ? (request) => request
        : HttpClientRequest.setHeader("last-event-id", String(options.lastEventId))
    )
    const response = yield* http.execute(request)
    // The parser gives a frame without `id:` the last id it read (the standard's last event ID),
    // so a stored event is told by its id being new: deltas and other frames repeat the last one.
    let lastId: string | undefined
    const isStored = (frame: Sse.Event) => {
      const stored = frame.id !== undefined && frame.id !== lastId
      lastId = frame.id
      return stored
    }
    return response.stream.pipe(
      Stream.decodeText(),
      Stream.pipeThroughChannel(Sse.decode()),
      Stream.mapEffect((frame) => itemOf(frame, isStored(frame))),
      Stream.filterMap(Filter.fromPredicateOption((item: Option.Option<AgentStreamItem>) => item))
    )
  }))
