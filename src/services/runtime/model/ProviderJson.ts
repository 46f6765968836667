/**
 * Reading what model providers send with Schemas: an adapter describes the parts of an answer it
 * uses; fields a provider may leave out or send as null are optional; anything else that does not
 * fit is a ModelProviderError saying so, not a thrown exception.
 */
import { Option, Predicate, Result, Schema, SchemaGetter } from "effect"
import { ModelProviderError } from "./ModelMessages.ts"

/** A field a provider may leave out or send as null. */
export const Maybe = <S extends Schema.Top>(schema: S) =>
  Schema.optional(Schema.NullOr(schema)).pipe(
    Schema.decodeTo(Schema.optional(Schema.toType(schema)), {
      decode: SchemaGetter.transformOptional(Option.filter(Predicate.isNotNull)),
      encode: SchemaGetter.passthrough()
    })
  )

/** A field a provider may leave out or send as null, `fallback` then. */
const OrElse = <S extends Schema.Top>(schema: S, fallback: () => S["Type"]) =>
  Schema.optional(Schema.NullOr(schema)).pipe(
    Schema.decodeTo(Schema.toType(schema), {
      decode: SchemaGetter.transformOptional((o) => o.pipe(Option.filter(Predicate.isNotNullish), Option.orElseSome(fallback))),
      encode: SchemaGetter.required()
    })
  )

/** A token count a provider may leave out or send as null: 0 then. */
export const Count = OrElse(Schema.Number, () => 0)

/** A text a provider may leave out or send as null: "" then. */
export const Text = OrElse(Schema.String, () => "")

/**
 * A field a provider may leave out or send as null, decoded as it came (absent, null or the
 * value). For the events a stream sends one of per token: it decodes in about a fifth of the time
 * of `Maybe` or `Text` (a few microseconds an event, docs/model-adapters.md), and the code that
 * reads it supplies the default (`?? ""`).
 */
export const Nullish = <S extends Schema.Top>(schema: S) => Schema.optional(Schema.NullOr(schema))

/**
 * A provider's JSON text parsed. Every streamed event is, so this is the plainest code that does
 * it: JSON.parse itself (not a schema around it), and no closures made per call.
 */
const parseJson = (text: string): Result.Result<unknown, ModelProviderError> => {
  try {
    return Result.succeed(JSON.parse(text))
  } catch {
    return Result.fail(new ModelProviderError({ status: null, message: `The provider sent malformed JSON: ${text.slice(0, 200)}` }))
  }
}

/** A schema of provider JSON: decoded only, with no services. */
type ProviderSchema = Schema.Decoder<unknown>

/** Parses a provider's JSON text and decodes it with `schema`. */
export const decodeJson = <S extends ProviderSchema>(schema: S) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (text: string): Result.Result<S["Type"], ModelProviderError> => Result.flatMap(parseJson(text), (json) => decodeValue(decode, json))
}

const decodeValue = <A>(decode: (value: unknown) => Result.Result<A, Schema.SchemaError>, value: unknown) =>
  Result.mapError(decode(value), (error) =>
    new ModelProviderError({
      status: null,
      message: `Could not read the model provider's answer: ${error.message}`
    }))

/** An event of a stream whose events are told apart by their `type`, decoded with the schema of its type. */
export type TypedEvent<Schemas extends Record<string, ProviderSchema>> = {
  readonly [K in keyof Schemas]: { readonly type: K; readonly event: Schemas[K]["Type"] }
}[keyof Schemas]

/** Whether an event names its type (a string `type`); checked, not decoded, since every event is. */
const namesItsType = Schema.is(Schema.Struct({ type: Schema.String }))

/**
 * A decoder of streamed events told apart by their `type` (in the JSON, else the SSE event's
 * name): the event decoded with the schema of its type, or undefined for a type not listed.
 */
export const typedEvents = <Schemas extends Record<string, ProviderSchema>>(schemas: Schemas) => {
  const decoders = Object.fromEntries(
    Object.entries(schemas).map(([type, schema]) => [type, Schema.decodeUnknownResult(schema)])
  )
  return (sse: { readonly event: string; readonly data: string }): Result.Result<TypedEvent<Schemas> | undefined, ModelProviderError> =>
    Result.flatMap(parseJson(sse.data), (json) => {
      const type = namesItsType(json) ? json.type : sse.event
      const decode = Object.hasOwn(decoders, type) ? decoders[type] : undefined
      if (decode === undefined) return Result.succeed(undefined)
      return Result.map(decodeValue(decode, json), (event) => ({ type, event }) as TypedEvent<Schemas>)
    })
}

/** The provider's message in an error body (`{ "error": { "message": ... } }`), if it has one. */
const decodeErrorBody = decodeJson(Schema.Struct({ error: Schema.Struct({ message: Schema.String }) }))

export const errorMessage = (body: string): string | undefined => Result.getOrUndefined(decodeErrorBody(body))?.error.message
