/**
 * Reading what model providers send with Schemas: an adapter describes the parts of an answer it
 * uses; fields a provider may leave out or send as null are optional; anything else that does not
 * fit is a ModelProviderError saying so, not a thrown exception.
 */
import { Either, ParseResult, Schema } from "effect"
import { ModelProviderError } from "./ModelMessages.ts"

/** A field a provider may leave out or send as null. */
export const Maybe = <A, I>(schema: Schema.Schema<A, I>) => Schema.optionalWith(schema, { nullable: true })

/** A token count a provider may leave out or send as null: 0 then. */
export const Count = Schema.optionalWith(Schema.Number, { nullable: true, default: () => 0 })

/** A text a provider may leave out or send as null: "" then. */
export const Text = Schema.optionalWith(Schema.String, { nullable: true, default: () => "" })

/**
 * A field a provider may leave out or send as null, decoded as it came (absent, null or the
 * value). For the events a stream sends one of per token: it decodes in about a fifth of the time
 * of `Maybe` or `Text` (a few microseconds an event, docs/model-adapters.md), and the code that
 * reads it supplies the default (`?? ""`).
 */
export const Nullish = <A, I>(schema: Schema.Schema<A, I>) => Schema.optional(Schema.NullOr(schema))

/**
 * A provider's JSON text parsed. Every streamed event is, so this is the plainest code that does
 * it: JSON.parse itself (not a schema around it), and no closures made per call.
 */
const parseJson = (text: string): Either.Either<unknown, ModelProviderError> => {
  try {
    return Either.right(JSON.parse(text))
  } catch {
    return Either.left(new ModelProviderError({ status: null, message: `The provider sent malformed JSON: ${text.slice(0, 200)}` }))
  }
}

/** Parses a provider's JSON text and decodes it with `schema`. */
export const decodeJson = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (text: string): Either.Either<A, ModelProviderError> => Either.flatMap(parseJson(text), (json) => decodeValue(decode, json))
}

const decodeValue = <A>(decode: (value: unknown) => Either.Either<A, ParseResult.ParseError>, value: unknown) =>
  Either.mapLeft(decode(value), (error) =>
    new ModelProviderError({
      status: null,
      message: `Could not read the model provider's answer: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
    }))

/** An event of a stream whose events are told apart by their `type`, decoded with the schema of its type. */
export type TypedEvent<Schemas extends Record<string, Schema.Schema.AnyNoContext>> = {
  readonly [K in keyof Schemas]: { readonly type: K; readonly event: Schema.Schema.Type<Schemas[K]> }
}[keyof Schemas]

/** Whether an event names its type (a string `type`); checked, not decoded, since every event is. */
const namesItsType = Schema.is(Schema.Struct({ type: Schema.String }))

/**
 * A decoder of streamed events told apart by their `type` (in the JSON, else the SSE event's
 * name): the event decoded with the schema of its type, or undefined for a type not listed.
 */
export const typedEvents = <Schemas extends Record<string, Schema.Schema.AnyNoContext>>(schemas: Schemas) => {
  const decoders = Object.fromEntries(
    Object.entries(schemas).map(([type, schema]) => [type, Schema.decodeUnknownEither(schema)])
  )
  return (sse: { readonly event: string; readonly data: string }): Either.Either<TypedEvent<Schemas> | undefined, ModelProviderError> =>
    Either.flatMap(parseJson(sse.data), (json) => {
      const type = namesItsType(json) ? json.type : sse.event
      const decode = Object.hasOwn(decoders, type) ? decoders[type] : undefined
      if (decode === undefined) return Either.right(undefined)
      return Either.map(decodeValue(decode, json), (event) => ({ type, event }) as TypedEvent<Schemas>)
    })
}

/** The provider's message in an error body (`{ "error": { "message": ... } }`), if it has one. */
const decodeErrorBody = decodeJson(Schema.Struct({ error: Schema.Struct({ message: Schema.String }) }))

export const errorMessage = (body: string): string | undefined => Either.getOrUndefined(decodeErrorBody(body))?.error.message
