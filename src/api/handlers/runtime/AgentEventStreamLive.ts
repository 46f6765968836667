import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { AgentEvents } from "../../../services/runtime/AgentEvents.ts"
import { Api } from "../../Api.ts"
import { StreamAuthentication } from "../../Security.ts"

export const AgentEventStreamLive = HttpApiBuilder.group(Api, "agentEventStream", (handlers) =>
  Effect.map(AgentEvents, (events) =>
    handlers.handle("streamEvents", ({ headers, path, urlParams }) =>
      Effect.map(
        events.stream(path.orgID, path.projectID, path.agentID, headers["last-event-id"] ?? urlParams.after_sequence ?? 0),
        (stream) =>
          HttpServerResponse.stream(stream, {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
          })
      ))))
  .pipe(builtWithOnly(AgentEvents, StreamAuthentication))
