/**
 * AES-256-GCM for secret values at rest. A sealed value is `v1.<iv>.<ciphertext+tag>` (base64url
 * parts, 12-byte random IV, 16-byte tag). The secret's id is the additional authenticated data,
 * so a sealed value copied onto another row does not open.
 */
import { Redacted, Result, Schema } from "effect"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

const VERSION = "v1"
const IV_BYTES = 12
const TAG_BYTES = 16

/** A sealed value that does not open: another format, another key, or another row's. */
class SealedValueUnreadable extends Schema.TaggedError<SealedValueUnreadable>()("SealedValueUnreadable", {
  reason: Schema.String
}) {
  override get message() {
    return `The sealed value does not open: ${this.reason}`
  }
}

export const seal = (key: Redacted.Redacted<Buffer>, plaintext: Redacted.Redacted<string>, aad: string): string => {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv("aes-256-gcm", Redacted.value(key), iv)
  cipher.setAAD(Buffer.from(aad, "utf8"))
  const body = Buffer.concat([cipher.update(Redacted.value(plaintext), "utf8"), cipher.final(), cipher.getAuthTag()])
  return [VERSION, iv.toString("base64url"), body.toString("base64url")].join(".")
}

/** The plaintext, when the value was sealed with this key for this `aad`. */
export const open = (
  key: Redacted.Redacted<Buffer>,
  sealed: string,
  aad: string
): Result.Result<Redacted.Redacted<string>, SealedValueUnreadable> => {
  const [version, ivText, bodyText] = sealed.split(".")
  if (version !== VERSION || ivText === undefined || bodyText === undefined) {
    return Result.fail(new SealedValueUnreadable({ reason: `unknown sealed value format ${version}` }))
  }
  return Result.try({
    try: () => {
      const body = Buffer.from(bodyText, "base64url")
      const decipher = createDecipheriv("aes-256-gcm", Redacted.value(key), Buffer.from(ivText, "base64url"))
      decipher.setAAD(Buffer.from(aad, "utf8"))
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES))
      const plaintext = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()])
      return Redacted.make(plaintext.toString("utf8"))
    },
    catch: (cause) => new SealedValueUnreadable({ reason: cause instanceof Error ? cause.message : String(cause) })
  })
}
