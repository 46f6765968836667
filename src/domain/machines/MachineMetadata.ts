/**
 * Metadata of a machine (and of a machine pool): string pairs, at most 16, keys up to 64
 * characters, values up to 512. The key `observed_platform` is reserved: the server sets it from
 * the platform the daemon reports, so a caller gives at most 15 pairs and never that key.
 */
import { Schema } from "effect"

export const METADATA_MAX_PAIRS = 16
export const METADATA_MAX_KEY_LENGTH = 64
export const METADATA_MAX_VALUE_LENGTH = 512
export const OBSERVED_PLATFORM_KEY = "observed_platform"
/** The key a personal API key's registration may use to name the machine's organization (docs/machines.md). */
export const ORG_METADATA_KEY = "org_id"

/** Characters as names count them (Unicode code points): an emoji is one, not two UTF-16 units. */
const characters = (text: string) => [...text].length

const Value = Schema.String.pipe(Schema.check(Schema.makeFilter((value) =>
  characters(value) <= METADATA_MAX_VALUE_LENGTH ||
  `expected a string of at most ${METADATA_MAX_VALUE_LENGTH} characters (got ${characters(value)})`
)))
// Keys are checked by a filter: a Record whose key schema refuses a key drops that pair silently.
const Pairs = Schema.Record(Schema.String, Value).pipe(
  Schema.check(Schema.makeFilter((metadata) => {
    const bad = Object.keys(metadata).find((key) => key.length === 0 || characters(key) > METADATA_MAX_KEY_LENGTH)
    return bad === undefined || `keys must be 1 to ${METADATA_MAX_KEY_LENGTH} characters (got ${JSON.stringify([...bad].slice(0, 80).join(""))})`
  }))
)

const atMost = (pairs: number) => (metadata: Readonly<Record<string, string>>) =>
  Object.keys(metadata).length <= pairs || `must have at most ${pairs} pairs (got ${Object.keys(metadata).length})`

/** Metadata as stored and shown, `observed_platform` included. */
export const MachineMetadata = Pairs.pipe(Schema.check(Schema.makeFilter(atMost(METADATA_MAX_PAIRS)))).annotate({
  identifier: "MachineMetadata"
})
export type MachineMetadata = typeof MachineMetadata.Type

/** Metadata as a caller gives it: at most 15 pairs, without the reserved key. */
export const MachineMetadataInput = Pairs.pipe(
  Schema.check(Schema.makeFilter(atMost(METADATA_MAX_PAIRS - 1))),
  Schema.check(Schema.makeFilter((metadata) =>
    !Object.hasOwn(metadata, OBSERVED_PLATFORM_KEY) ||
    `must not set ${OBSERVED_PLATFORM_KEY}: the server sets it from the platform the daemon reports`
  ))
).annotate({
  identifier: "MachineMetadataInput",
  description: `At most ${METADATA_MAX_PAIRS - 1} string pairs; keys up to ${METADATA_MAX_KEY_LENGTH} characters, values up to ${METADATA_MAX_VALUE_LENGTH}; ${OBSERVED_PLATFORM_KEY} is reserved`
})
export type MachineMetadataInput = typeof MachineMetadataInput.Type
