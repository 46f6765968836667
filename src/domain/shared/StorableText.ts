/**
 * Text the database can store. Postgres text and jsonb cannot hold a NUL character (U+0000), and
 * jsonb refuses an unpaired UTF-16 surrogate (a half of a pair without its other half), which
 * UTF-8 cannot encode either. The request body's scanner refuses both as escapes while the body
 * arrives (docs/api-conventions.md, "Bodies"); this is for text that reaches the server another
 * way: a string parsed from a config source's YAML or JSON text (its own escapes, such as YAML's
 * `"\0"` or `"\ud800"`), a query parameter (`?path=a%00b`).
 *
 * What a request sends is refused; what the platform receives from elsewhere (a daemon's result,
 * a model's output, a machine provider's log) cannot be sent back, so it is kept with each such
 * character replaced by U+FFFD (`storableText` here, `storableJson` in
 * services/shared/StorableJson.ts for a whole JSON value), as a UTF-8 decoder replaces bytes that
 * are not UTF-8 (docs/runtime.md, "Text the platform receives").
 */

/** Why a text cannot be stored: its first NUL or unpaired surrogate half. */
export type UnstorableCharacter =
  | { readonly _tag: "Nul" }
  | { readonly _tag: "UnpairedSurrogate"; readonly code: number }

const SUSPECT = /[\0\ud800-\udfff]/

/** The first character of `text` that the database cannot store, if any. */
export const unstorableCharacterOf = (text: string): UnstorableCharacter | undefined => {
  if (!SUSPECT.test(text)) return undefined
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 0) return { _tag: "Nul" }
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++
        continue
      }
      return { _tag: "UnpairedSurrogate", code }
    }
    if (code >= 0xdc00 && code <= 0xdfff) return { _tag: "UnpairedSurrogate", code }
  }
  return undefined
}

const codePoint = (code: number) => "U+" + code.toString(16).toUpperCase().padStart(4, "0")

/** The character in words: `a NUL character (U+0000)`, `an unpaired UTF-16 surrogate (U+D800)`. */
export const describeUnstorable = (found: UnstorableCharacter): string =>
  found._tag === "Nul"
    ? "a NUL character (U+0000)"
    : `an unpaired UTF-16 surrogate (${codePoint(found.code)})`

/** What to do instead. */
const remedyOf = (found: UnstorableCharacter, inKey: boolean): string =>
  inKey
    ? "rename the property"
    : found._tag === "Nul"
    ? "remove it"
    : "write a character outside the Basic Multilingual Plane whole, or as a pair of escapes such as \\ud83d\\ude00"

/**
 * The issue message for a string (`inKey` false) or a property name (`inKey` true) holding
 * `found`: `holds a NUL character (U+0000), which cannot be stored; remove it`.
 */
export const unstorableMessage = (found: UnstorableCharacter, inKey = false): string =>
  `${inKey ? "has a property name that holds" : "holds"} ${describeUnstorable(found)}, which cannot be stored; ${
    remedyOf(found, inKey)
  }`

/** What takes the place of a character that cannot be stored, in text from outside the requests. */
const REPLACEMENT_CHARACTER = "\ufffd"

/** Each NUL, and each surrogate half without its other half (the regular expression reads UTF-16 code units). */
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * `text` with each NUL and each unpaired surrogate half replaced by U+FFFD. A text without a NUL
 * and without any surrogate, the common case, is answered as it is after one scan of a character
 * class, without a copy; only one holding either is scanned again, for the replacement.
 */
export const storableText = (text: string): string =>
  SUSPECT.test(text) ? text.replace(UNSTORABLE, REPLACEMENT_CHARACTER) : text
