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

// Configuration domain
export const SecretId = makeId("sec", "SecretId")
export type SecretId = typeof SecretId.Type
export const SecretGrantId = makeId("secgrant", "SecretGrantId")
export type SecretGrantId = typeof SecretGrantId.Type
export const ModelProviderConfigId = makeId("mpc", "ModelProviderConfigId")
export type ModelProviderConfigId = typeof ModelProviderConfigId.Type
export const ConfiguredModelId = makeId("mdl", "ConfiguredModelId")
export type ConfiguredModelId = typeof ConfiguredModelId.Type
export const ModelRevisionId = makeId("mrev", "ModelRevisionId")
export type ModelRevisionId = typeof ModelRevisionId.Type
export const ModelGrantId = makeId("mdlgrant", "ModelGrantId")
export type ModelGrantId = typeof ModelGrantId.Type
export const SkillId = makeId("skl", "SkillId")
export type SkillId = typeof SkillId.Type
export const SkillGrantId = makeId("sklgrant", "SkillGrantId")
export type SkillGrantId = typeof SkillGrantId.Type
export const AgentConfigId = makeId("acfg", "AgentConfigId")
export type AgentConfigId = typeof AgentConfigId.Type

// Agent runtime
export const AgentId = makeId("agt", "AgentId")
export type AgentId = typeof AgentId.Type
export const TurnId = makeId("turn", "TurnId")
export type TurnId = typeof TurnId.Type
export const EventId = makeId("evt", "EventId")
export type EventId = typeof EventId.Type
export const InputId = makeId("inp", "InputId")
export type InputId = typeof InputId.Type
export const ToolCallId = makeId("tcl", "ToolCallId")
export type ToolCallId = typeof ToolCallId.Type
export const InteractionId = makeId("intr", "InteractionId")
export type InteractionId = typeof InteractionId.Type
export const ActorId = makeId("act", "ActorId")
export type ActorId = typeof ActorId.Type
export const ArtifactId = makeId("art", "ArtifactId")
export type ArtifactId = typeof ArtifactId.Type

// Machines
export const MachinePoolId = makeId("mpo", "MachinePoolId")
export type MachinePoolId = typeof MachinePoolId.Type
