/**
 * An integer sent as text (query and path parameters, headers such as Last-Event-ID): plain
 * decimal digits only, so `0x10`, `1e2`, `+1`, ` 1`, `1.0` and `01` are refused instead of being
 * read as numbers they might mean. Documented as an integer in the OpenAPI document.
 */
import { Schema } from "effect"

export const DecimalInteger = (minimum: number, maximum: number = Number.MAX_SAFE_INTEGER) => {
  const message = () => `expected an integer between ${minimum} and ${maximum}, written in decimal digits`
  return Schema.transform(
    Schema.String.pipe(Schema.pattern(minimum < 0 ? /^-?(?:0|[1-9][0-9]*)$/ : /^(?:0|[1-9][0-9]*)$/, { message })),
    Schema.Int.annotations({ message }).pipe(Schema.between(minimum, maximum, { message })),
    { strict: true, decode: Number, encode: String }
  ).annotations({ jsonSchema: { type: "integer", minimum, maximum } })
}
