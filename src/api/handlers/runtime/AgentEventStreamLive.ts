import { HttpApiBuilder } from "effect/http-api"
import { HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { AgentEvents } from "../../../services/runtime/AgentEvents.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { StreamAuthentication } from "../../Security.ts"

export const AgentEventStreamLive = HttpApiBuilder.group(Api, "agentEventStream", (handlers) =>
  Effect.map(Effect.service(AgentEvents), (events) =>
    handlers.handle("streamEvents", ({ headers, params, query }) =>
      Effect.map(
        events.stream(
          params.orgID,
          params.projectID,
          params.agentID,
          headers["last-event-id"] !== undefined
            ? { after: headers["last-event-id"], namedBy: "last-event-id" }
            : { after: query.after_sequence ?? 0, namedBy: "after_sequence" }
        ),
        (stream) =>
          HttpServerResponse.stream(stream, {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
          })
      ))))
  .pipe(builtWithOnly(AgentEvents, StreamAuthentication, ApiErrors))
