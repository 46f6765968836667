/**
 * The agent's event stream: its own group because its authentication differs from the other
 * agent routes (a stream token in the query is accepted here, and only here).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Option, Schema } from "effect"
import { NotFound } from "../../domain/shared/Errors.ts"
import { StreamAuthentication } from "../Security.ts"
import { AGENT, AgentPath, SequenceParam } from "./AgentsApi.ts"

/**
 * The sequence of the last event a reconnecting client received. Empty is no id, as in the SSE
 * standard (a client that received no event with an id sends it so): then `after_sequence` counts.
 */
const LastEventId = Schema.optionalToOptional(
  // Declared as the integer it carries (empty, the standard's "no id", is not worth a union).
  Schema.String.annotations({
    jsonSchema: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    description: "The last event's sequence, in decimal digits; empty means none"
  }),
  SequenceParam,
  { decode: Option.filter((id) => id !== ""), encode: (id) => id }
)

export class AgentEventStreamApi extends HttpApiGroup.make("agentEventStream")
  .annotate(OpenApi.Title, "Agent event stream")
  .add(
    HttpApiEndpoint.get("streamEvents", `${AGENT}/events/stream`)
      .annotate(OpenApi.Summary, "Stream the agent's events")
      .setPath(AgentPath)
      .setUrlParams(Schema.Struct({
        after_sequence: Schema.optional(SequenceParam),
        stream_token: Schema.optional(Schema.String).annotations({
          description: "A stream token (POST .../events/stream-token) instead of the Authorization header"
        })
      }))
      .setHeaders(Schema.Struct({ "last-event-id": LastEventId }))
      .addSuccess(
        HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
          description: "Server-Sent Events: `id:` the sequence, `event:` the event_kind, `data:` the event as JSON; " +
            "while the model answers, `text_delta` and `reasoning_summary_delta` events without `id:` " +
            "(`data:` {agent_id, turn_id, step, kind, delta}; live only, never replayed); " +
            "a `: heartbeat` comment every 15 s without events"
        })
      )
      .addError(NotFound.Wire)
      .annotate(
        OpenApi.Description,
        "The timeline as Server-Sent Events, from after `Last-Event-ID` (or `after_sequence`; the header wins), " +
          "then live. Reconnecting with the last id received misses and repeats nothing. Ends with a `stream_closed` " +
          "event (no id) within a few seconds of the caller losing access (key deleted, member removed, project deleted)."
      )
  )
  .middleware(StreamAuthentication)
  .annotate(OpenApi.Description, "The agent's timeline as Server-Sent Events (bearer API key or stream token)")
{}
