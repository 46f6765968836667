/**
 * Makes public ids (docs/api-conventions.md): `prefix_` and 26 characters of [a-z2-7] holding
 * 128 bits, a 48-bit millisecond timestamp (from Effect's `Clock`) followed by 80 random bits,
 * written in base32 with the alphabet in ASCII order so that ids compare, as strings in Postgres
 * and in JavaScript, in creation order. Ids made in the same millisecond by one generator
 * increment the random part, so they stay ordered too. The app builds one generator.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import type { IdSchema } from "../../domain/shared/Ids.ts"

const ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
const RANDOM_BYTES = 10
const RANDOM_BITS = 80n
const RANDOM_MASK = (1n << RANDOM_BITS) - 1n

/** 128 bits, shifted left by 2 to fill 26 five-bit characters (130 bits). */
const encode = (value: bigint): string => {
  let rest = value << 2n
  let out = ""
  for (let i = 0; i < 26; i++) {
    out = ALPHABET[Number(rest & 31n)] + out
    rest >>= 5n
  }
  return out
}

const make = Effect.sync(() => {
  let lastMillis = 0n
  let lastRandom = 0n

  const nextValue = (now: bigint): bigint => {
    if (now > lastMillis) {
      lastMillis = now
      lastRandom = BigInt("0x" + randomBytes(RANDOM_BYTES).toString("hex"))
    } else {
      lastRandom = (lastRandom + 1n) & RANDOM_MASK
      if (lastRandom === 0n) lastMillis += 1n
    }
    return (lastMillis << RANDOM_BITS) | lastRandom
  }

  /** A new id of the kind `schema` describes, e.g. `make(OrgId)`. */
  const make = <Id extends string>(schema: IdSchema<Id>): Effect.Effect<Id> =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (millis) => Effect.sync(() => schema.make(`${schema.prefix}_${encode(nextValue(BigInt(millis)))}`))
    )

  return { make } as const
})

export class IdGenerator extends Context.Service<IdGenerator, Effect.Success<typeof make>>()("IdGenerator") {
  static readonly layer = Layer.effect(this, make)
}
