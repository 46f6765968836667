/**
 * AES-256-GCM for secret values at rest. A sealed value is `v1.<iv>.<ciphertext+tag>` (base64url
 * parts, 12-byte random IV, 16-byte tag). The secret's id is the additional authenticated data,
 * so a sealed value copied onto another row does not open.
 */
import { Redacted } from "effect"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

const VERSION = "v1"
const IV_BYTES = 12
const TAG_BYTES = 16

export const seal = (key: Redacted.Redacted<Buffer>, plaintext: Redacted.Redacted<string>, aad: string): string => {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv("aes-256-gcm", Redacted.value(key), iv)
  cipher.setAAD(Buffer.from(aad, "utf8"))
  const body = Buffer.concat([cipher.update(Redacted.value(plaintext), "utf8"), cipher.final(), cipher.getAuthTag()])
  return [VERSION, iv.toString("base64url"), body.toString("base64url")].join(".")
}

/** The plaintext; throws when the value was not sealed with this key for this `aad`. */
export const open = (key: Redacted.Redacted<Buffer>, sealed: string, aad: string): Redacted.Redacted<string> => {
  const [version, ivText, bodyText] = sealed.split(".")
  if (version !== VERSION || ivText === undefined || bodyText === undefined) {
    throw new Error(`unknown sealed value format ${version}`)
  }
  const body = Buffer.from(bodyText, "base64url")
  const decipher = createDecipheriv("aes-256-gcm", Redacted.value(key), Buffer.from(ivText, "base64url"))
  decipher.setAAD(Buffer.from(aad, "utf8"))
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES))
  const plaintext = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()])
  return Redacted.make(plaintext.toString("utf8"))
}
