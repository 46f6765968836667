/**
 * Free-form metadata a caller attaches to what it creates and the platform stores: an agent's
 * `metadata`, a submitted content block's, a workspace session's. Any JSON object, of at most
 * 64 keys and 16 KiB as compact JSON (docs/api-conventions.md, "Free-form metadata"). The
 * contract leaves its size open; unbounded, it was bounded only by the body (48 MiB on the
 * routes that take content blocks), and an agent's metadata is read back with every page of
 * agents. What the server itself stores there (a model's reasoning replay on a
 * `reasoning_summary` block, a checkpoint's facts) is not checked by it.
 */
import { Schema } from "effect"

export const METADATA_MAX_KEYS = 64
export const METADATA_MAX_BYTES = 16 * 1024

const utf8 = new TextEncoder()

const DESCRIPTION = `Any JSON object of at most ${METADATA_MAX_KEYS} keys and ${METADATA_MAX_BYTES} bytes as compact JSON (UTF-8)`

export const Metadata = Schema.Record(Schema.String, Schema.Unknown).pipe(
  Schema.check(
    // Counted first, and the size only when the count is within bounds: 300,000 keys are refused
    // without serializing them.
    Schema.isMaxProperties(METADATA_MAX_KEYS, { message: `must have at most ${METADATA_MAX_KEYS} keys` }).abort(),
    Schema.makeFilter((metadata) => {
      const bytes = utf8.encode(JSON.stringify(metadata)).byteLength
      return bytes <= METADATA_MAX_BYTES ||
        `must be at most ${METADATA_MAX_BYTES} bytes as compact JSON (got ${bytes})`
    })
  )
).annotate({ identifier: "Metadata", description: DESCRIPTION })
