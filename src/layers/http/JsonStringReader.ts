/**
 * The inside of JSON strings, read as their bytes arrive: it checks the UTF-8 of the text, checks
 * and decodes the escapes (a `\ud83d\ude00` pair is one character; `\u0000` and an unpaired
 * surrogate half are refused, since Postgres text and jsonb can hold neither), and counts how many
 * bytes the escapes gain or lose when written compactly by `JSON.stringify` (the JsonScanner's
 * canonical size). It knows no positions and no paths: the scanner finds the quotes and
 * backslashes it stops at, and turns what it refuses into a problem naming the place.
 */
import { canonicalSize, hexValue, SIMPLE_ESCAPES, utf8Lead } from "./JsonGrammar.ts"

/** What `readEscape` says: the escape goes on. */
const IN_ESCAPE = 0
/** The escape is complete: text follows. */
export const ESCAPE_DONE = 1
/** The letter of an escape JSON does not have (`\x`). */
export const INVALID_ESCAPE = 2
/** A byte of a `\u` escape that is not a hexadecimal digit. */
export const INVALID_UNICODE_ESCAPE = 3
/** A `\u` escape of a surrogate half without its other half (`code` is the half). */
export const UNPAIRED_SURROGATE = 4
/** The end of a `\u0000` escape. */
export const NUL_CHARACTER = 5

/** The escape being read: its letter, a `\u` escape's digits, the `\` and the `u` of a pair's low half. */
const LETTER = 0, UNICODE = 1, LOW_SURROGATE = 2, LOW_SURROGATE_U = 3

const QUOTE = 0x22, BACKSLASH = 0x5c, LETTER_U = 0x75

export class JsonStringReader {
  /** Bytes the escapes read so far, in all strings, gain (negative: lose) when written compactly. */
  sizeChange = 0
  /** The value of the last `\u` escape (the unpaired half after UNPAIRED_SURROGATE). */
  code = 0
  private escape = LETTER
  private unicodeDigits = 0
  /** The last `\u` escape was a high surrogate half: the next must be the low half. */
  private expectLow = false
  /** Continuation bytes the current UTF-8 character still needs, and the range of the next one. */
  private utf8Need = 0
  private utf8Low = 0x80
  private utf8High = 0xbf

  /**
   * Reads the text of a string in `bytes` from `start` up to a quote, a backslash or a control
   * character and returns its index (`bytes.length` when there is none); -1 at a byte that is not
   * valid UTF-8.
   */
  readText(bytes: Uint8Array, start: number): number {
    const end = bytes.length
    let need = this.utf8Need
    let i = start
    for (; i < end; i++) {
      const byte = bytes[i]
      if (need > 0) {
        if (byte < this.utf8Low || byte > this.utf8High) return -1
        this.utf8Low = 0x80
        this.utf8High = 0xbf
        need--
      } else if (byte >= 0x80) {
        const lead = utf8Lead(byte)
        if (lead < 0) return -1
        need = lead & 0xff
        this.utf8Low = (lead >> 8) & 0xff
        this.utf8High = lead >> 16
      } else if (byte === QUOTE || byte === BACKSLASH || byte < 0x20) break
    }
    this.utf8Need = need
    return i
  }

  /** One byte of an escape, the first after the backslash or a later one: one of the outcomes above. */
  readEscape(byte: number): number {
    switch (this.escape) {
      case LETTER: {
        if (byte === LETTER_U) return this.startUnicodeEscape()
        const size = SIMPLE_ESCAPES[byte]
        if (size === undefined) return INVALID_ESCAPE
        this.sizeChange += size - 2
        return ESCAPE_DONE
      }
      case UNICODE: {
        const digit = hexValue(byte)
        if (digit < 0) return INVALID_UNICODE_ESCAPE
        this.code = this.code * 16 + digit
        return ++this.unicodeDigits === 4 ? this.endUnicodeEscape() : IN_ESCAPE
      }
      case LOW_SURROGATE:
        if (byte !== BACKSLASH) return UNPAIRED_SURROGATE
        this.escape = LOW_SURROGATE_U
        return IN_ESCAPE
      default: // LOW_SURROGATE_U
        return byte === LETTER_U ? this.startUnicodeEscape() : UNPAIRED_SURROGATE
    }
  }

  private startUnicodeEscape(): number {
    this.escape = UNICODE
    this.unicodeDigits = 0
    this.code = 0
    return IN_ESCAPE
  }

  private endUnicodeEscape(): number {
    const code = this.code
    this.escape = LETTER
    if (this.expectLow) {
      this.expectLow = false
      if (code < 0xdc00 || code > 0xdfff) return UNPAIRED_SURROGATE
      this.sizeChange -= 2 // the pair's 12 bytes are 4 in UTF-8; the high half counted -6
      return ESCAPE_DONE
    }
    if (code >= 0xd800 && code <= 0xdbff) {
      this.expectLow = true
      this.sizeChange -= 6
      this.escape = LOW_SURROGATE
      return IN_ESCAPE
    }
    if (code >= 0xdc00 && code <= 0xdfff) return UNPAIRED_SURROGATE
    if (code === 0) return NUL_CHARACTER
    this.sizeChange += canonicalSize(code) - 6
    return ESCAPE_DONE
  }
}
