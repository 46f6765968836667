/**
 * A stream token: what a browser's EventSource (which cannot send an Authorization header) puts
 * in the query of an agent's event stream (docs/agents-api.md, "Stream tokens").
 */
import { Schema } from "effect"
import { Timestamp } from "../shared/Timestamp.ts"

export class StreamToken extends Schema.Class<StreamToken>("StreamToken")({
  token: Schema.String.annotate({
    description: "Send as `?stream_token=` on this agent's `GET .../events/stream`; valid until `expires_at`"
  }),
  expires_at: Timestamp
}) {}
