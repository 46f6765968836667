/**
 * A SHA-256 as the API writes it: `sha256:` then 64 lowercase hexadecimal digits (a file's
 * digest, a checkpoint's id, an agent config's definition and instruction hashes).
 */
import { Schema } from "effect"

export const Sha256Digest = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^sha256:[0-9a-f]{64}$/u, {
    message: "must be a digest of the form sha256: followed by 64 lowercase hexadecimal digits"
  }))
)
export type Sha256Digest = typeof Sha256Digest.Type
