import { Schema } from "effect"

/** RFC 3339 in UTC on the wire, a Date in code. */
export const Timestamp = Schema.Date.annotations({
  identifier: "Timestamp",
  jsonSchema: { type: "string", format: "date-time" }
})
