/**
 * ResourceName: 1 to 64 characters after Unicode NFC normalization; spaces and
 * punctuation allowed; leading or trailing whitespace, a leading combining mark (an accent with no
 * character to sit on, shown over whatever precedes the name) and invisible or control characters
 * (InvisibleCharacters.ts: Unicode category C, line or paragraph separators, default-ignorable
 * characters, the blank Braille pattern; a zero-width joiner inside an emoji sequence and a
 * variation selector after a character are allowed) rejected.
 */
import { Schema, SchemaTransformation } from "effect"
import { hasInvisibleOrControl, INVISIBLE_OR_CONTROL_MESSAGE } from "./InvisibleCharacters.ts"

const MAX_LENGTH = 64

/** A combining mark (Unicode category M) at the start: after NFC, nothing it could combine with. */
const LEADING_MARK = /^\p{M}/u

const problem = (name: string): string | undefined => {
  const length = [...name].length
  if (length < 1) return "must not be empty"
  if (length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters (got ${length})`
  if (name.trim() !== name) return "must not start or end with whitespace"
  if (LEADING_MARK.test(name)) return "must not start with a combining mark (an accent with no character before it)"
  if (hasInvisibleOrControl(name)) return INVISIBLE_OR_CONTROL_MESSAGE
  return undefined
}

export const ResourceName = Schema.String.annotate({
  identifier: "ResourceName",
  description:
    "1 to 64 characters, NFC-normalized, no leading or trailing whitespace, no leading combining mark, no invisible or control characters"
}).pipe(
  Schema.decodeTo(
    Schema.String.check(Schema.makeFilter(problem)),
    SchemaTransformation.transform({ decode: (raw) => raw.normalize("NFC"), encode: (name) => name })
  )
)
export type ResourceName = typeof ResourceName.Type
