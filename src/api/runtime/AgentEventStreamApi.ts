/**
 * The agent's event stream: its own group because its authentication differs from the other
 * agent routes (a stream token in the query is accepted here, and only here).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Option, Schema, SchemaGetter } from "effect"
import { InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import { optional } from "../../domain/shared/Optional.ts"
import { StreamAuthentication } from "../Security.ts"
import { AGENT, AgentPath, SequenceParam } from "./AgentsApi.ts"

/**
 * The sequence of the last event a reconnecting client received. Empty is no id, as in the SSE
 * standard (a client that received no event with an id sends it so): then `after_sequence` counts.
 */
const LastEventId = Schema.optionalKey(
  // Declared as the integer it carries (empty, the standard's "no id", is not worth a union): a
  // declared string, since a `Schema.String` is always documented as `type: string` (as in
  // domain/shared/DecimalInteger.ts); any text passes here, SequenceParam checks it.
  Schema.declare((input): input is string => typeof input === "string", {
    expected: "string",
    toCodecJson: () => undefined,
    toCodecStringTree: () => undefined
  }).check(
    Schema.makeFilter(() => true, {
      toJsonSchema: () => ({ type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
    })
  ).annotate({ description: "The last event's sequence, in decimal digits; empty means none" })
).pipe(
  Schema.decodeTo(Schema.optionalKey(SequenceParam), {
    decode: SchemaGetter.transformOptional(Option.filter((id: string) => id !== "")),
    encode: SchemaGetter.passthrough()
  })
)

export class AgentEventStreamApi extends HttpApiGroup.make("agentEventStream")
  .annotate(OpenApi.Title, "Agent event stream")
  .add(
    HttpApiEndpoint.get("streamEvents", `${AGENT}/events/stream`, {
      params: AgentPath,
      query: Schema.Struct({
        after_sequence: optional(SequenceParam),
        stream_token: optional(Schema.String.annotate({
          description: "A stream token (POST .../events/stream-token) instead of the Authorization header"
        }))
      }),
      headers: Schema.Struct({ "last-event-id": LastEventId }),
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/event-stream" })).annotate({
        description: "Server-Sent Events: `id:` the sequence, `event:` the event_kind, `data:` the event as JSON; " +
          "while the model answers, `text_delta` and `reasoning_summary_delta` events without `id:` " +
          "(`data:` {agent_id, turn_id, step, kind, offset, delta}; live only, never replayed); " +
          "a `: heartbeat` comment every 15 s without events"
      }),
      error: [InvalidRequest.Wire, NotFound.Wire]
    })
      .annotate(OpenApi.Summary, "Stream the agent's events")
      .annotate(
        OpenApi.Description,
        "The timeline as Server-Sent Events, from after `Last-Event-ID` (or `after_sequence`; the header wins), " +
          "then live. Reconnecting with the last id received misses and repeats nothing; an id past the agent's last event " +
          "is `invalid_request` (no stream sent it). Ends with a `stream_closed` " +
          "event (no id) within a few seconds of the caller losing access (key deleted, member removed, project deleted), " +
          "or when the server stops (`server_shutdown`: reconnect, to its next start or another process). " +
          "One API key holds at most 1,000 streams open at once per server process (a stream token's count as its key's): " +
          "the next is 429 rate_limited until one closes."
      )
  )
  .middleware(StreamAuthentication)
  .annotate(OpenApi.Description, "The agent's timeline as Server-Sent Events (bearer API key or stream token)")
{}
