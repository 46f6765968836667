/**
 * An optional property as Effect 3's `Schema.optional` read and wrote it: the key may be left
 * out or (in code) hold `undefined`, a property set to `undefined` is left out when encoding, and
 * `null` is refused (unless the schema takes it).
 *
 * Effect 4's `Schema.optional(S)` is `S | undefined` under an optional key, and its JSON codec
 * (which HttpApi applies to every body) writes `undefined` as `null` and reads `null` as
 * `undefined`; `Schema.optionalKey(S)` refuses a property that is present but `undefined`.
 * Here the JSON form of the property is `S`'s alone (so is its JSON Schema), and in code it is
 * `Schema.optional(S)`. `annotations` describe the property (its description in the OpenAPI
 * document).
 */
import { Option, Predicate, Schema, SchemaGetter } from "effect"

/**
 * The value of the key as it arrives, checked by what it is decoded to (`S`):
 * in JSON and in a query string it is `S`'s encoded form (their codecs take it from `S`, and so
 * does the JSON Schema); in code it may also be `undefined`.
 */
const encodedOrUndefined = <S extends Schema.Constraint>(schema: S) => {
  const encoded = Schema.toEncoded(schema)
  const asEncoded = () =>
    Schema.link<S["Encoded"] | undefined>()(Schema.optionalKey(encoded), {
      decode: SchemaGetter.passthrough(),
      encode: SchemaGetter.passthrough({ strict: false })
    })
  return Schema.declare((_): _ is S["Encoded"] | undefined => true, {
    toCodecJson: asEncoded,
    toCodecStringTree: asEncoded
  })
}

export interface optional<S extends Schema.Constraint> extends
  Schema.decodeTo<
    Schema.optional<Schema.toType<S>>,
    Schema.decodeTo<Schema.optionalKey<S>, Schema.optionalKey<Schema.declare<S["Encoded"] | undefined>>>
  >
{}

export const optional = <S extends Schema.Constraint>(
  schema: S,
  annotations?: Schema.Annotations.Key<S["Type"]>
): optional<S> =>
  Schema.optionalKey(encodedOrUndefined(schema)).pipe(
    (key) => annotations === undefined ? key : key.annotateKey(annotations),
    // A property present but undefined is one left out; then `S` decodes the value (and says
    // what is wrong with it).
    Schema.decodeTo(Schema.optionalKey(schema), {
      decode: SchemaGetter.transformOptional(Option.filter(Predicate.isNotUndefined)),
      encode: SchemaGetter.passthrough()
    }),
    // `undefined` in code, left out when encoding.
    Schema.decodeTo(Schema.optional(Schema.toType(schema)), {
      decode: SchemaGetter.passthrough({ strict: false }),
      encode: SchemaGetter.transformOptional(Option.filter(Predicate.isNotUndefined))
    })
  )
