import { Schema, SchemaTransformation } from "effect"

/** RFC 3339 in UTC on the wire, a Date in code. */
export const Timestamp = Schema.String.annotate({ identifier: "Timestamp", format: "date-time" }).pipe(
  Schema.decodeTo(Schema.Date, SchemaTransformation.dateFromString)
)
