/**
 * Public identifiers: a lowercase prefix, "_", then 26 characters of [a-z2-7].
 *
 * The 26 characters carry 128 bits: a 48-bit millisecond timestamp followed by 80 random bits,
 * written in base32 with the alphabet in ASCII order so that ids compare (as strings, in
 * Postgres and in JavaScript) in creation order. Ids made in the same millisecond by one process
 * increment the random part, so they stay ordered too.
 */
import { Schema } from "effect"
import { randomBytes } from "node:crypto"

const ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
const RANDOM_BITS = 80n
const RANDOM_MASK = (1n << RANDOM_BITS) - 1n

let lastMillis = 0n
let lastRandom = 0n

const nextValue = (): bigint => {
  const now = BigInt(Date.now())
  if (now > lastMillis) {
    lastMillis = now
    lastRandom = BigInt("0x" + randomBytes(10).toString("hex"))
  } else {
    lastRandom = (lastRandom + 1n) & RANDOM_MASK
    if (lastRandom === 0n) lastMillis += 1n
  }
  return (lastMillis << RANDOM_BITS) | lastRandom
}

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

/** The branded schema and generator for one id prefix. */
export const makeId = <const Prefix extends string, const Brand extends string>(prefix: Prefix, brand: Brand) => {
  const schema = Schema.String.pipe(
    Schema.pattern(new RegExp(`^${prefix}_[a-z2-7]{26}$`), {
      message: () => `must be an id of the form ${prefix}_ followed by 26 characters of [a-z2-7]`
    }),
    Schema.brand(brand)
  )
  const make = (): typeof schema.Type => `${prefix}_${encode(nextValue())}` as typeof schema.Type
  return Object.assign(schema, { prefix, make })
}

export const OrgId = makeId("org", "OrgId")
export type OrgId = typeof OrgId.Type
export const ProjectId = makeId("proj", "ProjectId")
export type ProjectId = typeof ProjectId.Type
export const UserId = makeId("usr", "UserId")
export type UserId = typeof UserId.Type
export const InvitationId = makeId("oinv", "InvitationId")
export type InvitationId = typeof InvitationId.Type
export const ApiKeyId = makeId("key", "ApiKeyId")
export type ApiKeyId = typeof ApiKeyId.Type
