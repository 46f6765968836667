/**
 * ResourceName (spec 2.2): 1 to 64 characters after Unicode NFC normalization; spaces and
 * punctuation allowed; leading or trailing whitespace and invisible or control characters
 * (Unicode category C: controls, format characters such as U+200B, private use, unassigned,
 * surrogates; and line or paragraph separators) rejected.
 */
import { Schema } from "effect"

const MAX_LENGTH = 64
const INVISIBLE_OR_CONTROL = /[\p{C}\p{Zl}\p{Zp}]/u

const problem = (name: string): string | undefined => {
  const length = [...name].length
  if (length < 1) return "must not be empty"
  if (length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters (got ${length})`
  if (name.trim() !== name) return "must not start or end with whitespace"
  if (INVISIBLE_OR_CONTROL.test(name)) return "must not contain invisible or control characters"
  return undefined
}

export const ResourceName = Schema.transform(
  Schema.String,
  Schema.String.pipe(Schema.filter((name) => problem(name) ?? true)),
  { strict: true, decode: (raw) => raw.normalize("NFC"), encode: (name) => name }
).annotations({
  identifier: "ResourceName",
  description: "1 to 64 characters, NFC-normalized, no leading or trailing whitespace, no invisible or control characters"
})
export type ResourceName = typeof ResourceName.Type
