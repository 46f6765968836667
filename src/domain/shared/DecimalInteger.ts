/**
 * An integer sent as text (query and path parameters, headers such as Last-Event-ID): plain
 * decimal digits only, so `0x10`, `1e2`, `+1`, ` 1`, `1.0` and `01` are refused instead of being
 * read as numbers they might mean. Documented as an integer in the OpenAPI document.
 */
import { Schema, SchemaTransformation } from "effect"

/**
 * A string that the JSON Schema of its checks describes alone: a `Schema.String` is always
 * documented as `type: string`, which the integer it holds is not. It is text already, so the
 * JSON and query-string codecs take it as it is.
 */
const Text = Schema.declare((input): input is string => typeof input === "string", {
  expected: "string",
  toCodecJson: () => undefined,
  toCodecStringTree: () => undefined
})

export const DecimalInteger = (minimum: number, maximum: number = Number.MAX_SAFE_INTEGER) => {
  const message = `expected an integer between ${minimum} and ${maximum}, written in decimal digits`
  return Text.check(
    Schema.isPattern(minimum < 0 ? /^-?(?:0|[1-9][0-9]*)$/ : /^(?:0|[1-9][0-9]*)$/, {
      message,
      toJsonSchema: () => ({ type: "integer", minimum, maximum })
    })
  ).pipe(
    Schema.decodeTo(
      Schema.Number.check(Schema.isInt({ message }), Schema.isBetween({ minimum, maximum }, { message })),
      SchemaTransformation.transform({ decode: Number, encode: String })
    )
  )
}
