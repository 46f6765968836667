/**
 * Making a domain object from parts a service put together (a membership and its user's e-mail,
 * a stored config and its rendered model): validated with the class's own schema, through parsers
 * compiled once. (A class constructor validates too, but compiles its parser again on every call:
 * up to half a millisecond for a class with nested schemas.)
 *
 *     const makeMember = constructor(Member, Schema.Struct(Member.fields))
 */
import { Schema } from "effect"

export const constructor = <A, I, Parts, PartsEncoded>(
  schema: Schema.Codec<A, I>,
  parts: Schema.Codec<Parts, PartsEncoded>
): (parts: Parts) => A => {
  const encode = Schema.encodeSync(parts)
  const decode = Schema.decodeUnknownSync(schema)
  return (value) => decode(encode(value))
}
