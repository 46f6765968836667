/**
 * The byte-level rules of JSON (RFC 8259) and UTF-8 that the JsonScanner applies: literals,
 * escapes, the number grammar, UTF-8 lead bytes, and the size `JSON.stringify` gives a character.
 */

export const LITERALS: Readonly<Record<number, Uint8Array>> = {
  0x74: new TextEncoder().encode("true"),
  0x66: new TextEncoder().encode("false"),
  0x6e: new TextEncoder().encode("null")
}

/** Canonical size of the character of a one-letter escape (`\n` stays two bytes, `\/` becomes `/`). */
export const SIMPLE_ESCAPES: Readonly<Record<number, number>> = {
  0x22: 2,
  0x5c: 2,
  0x2f: 1,
  0x62: 2,
  0x66: 2,
  0x6e: 2,
  0x72: 2,
  0x74: 2
}

/** Bytes `JSON.stringify` writes for the character `code` (not a surrogate). */
export const canonicalSize = (code: number): number =>
  code === 0x22 || code === 0x5c || code === 8 || code === 9 || code === 10 || code === 12 || code === 13
    ? 2
    : code < 0x20
    ? 6
    : code < 0x80
    ? 1
    : code < 0x800
    ? 2
    : 3

export const hexValue = (byte: number): number =>
  byte >= 0x30 && byte <= 0x39
    ? byte - 0x30
    : byte >= 0x61 && byte <= 0x66
    ? byte - 0x57
    : byte >= 0x41 && byte <= 0x46
    ? byte - 0x37
    : -1

/**
 * The number grammar as states: 0 after `-`, 1 after a leading `0`, 2 in integer digits, 3 after
 * `.`, 4 in fraction digits, 5 after `e`, 6 after the exponent's sign, 7 in exponent digits.
 */
export const numberStart = (byte: number): number => byte === 0x2d ? 0 : byte === 0x30 ? 1 : 2

/** Whether a number may end in `state`. */
export const numberCanEnd = (state: number): boolean => state === 1 || state === 2 || state === 4 || state === 7

/** Whether `state` only continues with more digits of the same part. */
export const inDigits = (state: number): boolean => state === 2 || state === 4 || state === 7

/** The state after `byte`, or -1 when the byte is not part of the number. */
export const nextNumberState = (state: number, byte: number): number => {
  if (byte >= 0x30 && byte <= 0x39) {
    if (state === 1) return -1
    return state === 0 ? numberStart(byte) : state === 3 ? 4 : state === 5 || state === 6 ? 7 : state
  }
  if (byte === 0x2e && (state === 1 || state === 2)) return 3
  if ((byte === 0x65 || byte === 0x45) && (state === 1 || state === 2 || state === 4)) return 5
  if ((byte === 0x2b || byte === 0x2d) && state === 5) return 6
  return -1
}

/**
 * A UTF-8 lead byte, packed in one number (no allocation per character): how many continuation
 * bytes follow (`& 0xff`), and the range of the first one (`>> 8 & 0xff` to `>> 16`), which rules
 * out overlong forms, encoded surrogates and code points above U+10FFFF; -1 for a byte that
 * cannot start a character.
 */
export const utf8Lead = (byte: number): number =>
  byte >= 0xc2 && byte <= 0xdf
    ? 1 | 0x80 << 8 | 0xbf << 16
    : byte >= 0xe0 && byte <= 0xef
    ? 2 | (byte === 0xe0 ? 0xa0 : 0x80) << 8 | (byte === 0xed ? 0x9f : 0xbf) << 16
    : byte >= 0xf0 && byte <= 0xf4
    ? 3 | (byte === 0xf0 ? 0x90 : 0x80) << 8 | (byte === 0xf4 ? 0x8f : 0xbf) << 16
    : -1
