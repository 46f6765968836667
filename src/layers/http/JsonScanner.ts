/**
 * A streaming check of a JSON request body, fed chunk by chunk as the bytes arrive, before
 * anything parses it. It checks the syntax and the UTF-8, bounds the nesting at
 * MAX_NESTING_DEPTH, and refuses `\u0000` and unpaired surrogate escapes (Postgres text and jsonb
 * can hold neither), naming the field by its JSON Pointer. No recursion anywhere: the nesting is
 * a stack of at most MAX_NESTING_DEPTH entries. A `ScanObserver` (ContentBlockBudget) follows the structure to enforce
 * limits on parts of the body while they stream in.
 *
 * Sizes: the scanner keeps the "canonical" position, the number of bytes the JSON read so far
 * takes when written compactly by `JSON.stringify` (whitespace between tokens dropped, escapes
 * counted as `JSON.stringify` writes the character), so a limit on part of a body means the same
 * whatever the formatting.
 */
import {
  type BodyProblem,
  notJson,
  notUtf8,
  nulCharacter,
  tooDeep,
  unexpectedByte,
  unpairedSurrogate
} from "./BodyProblems.ts"
import {
  canonicalSize,
  hexValue,
  inDigits,
  LITERALS,
  nextNumberState,
  numberCanEnd,
  numberStart,
  SIMPLE_ESCAPES,
  utf8Lead
} from "./JsonGrammar.ts"
import { JsonPath } from "./JsonPath.ts"

export const MAX_NESTING_DEPTH = 64

/** Follows the structure of the body; any callback may stop the scan with a problem. */
export interface ScanObserver {
  /** A container was opened at `scanner.depth` (an object when `isObject`). */
  readonly opened: (scanner: JsonScanner, isObject: boolean, canonicalStart: number) => BodyProblem | undefined
  /** The container at `scanner.depth` is about to close. */
  readonly closing: (scanner: JsonScanner) => BodyProblem | undefined
  /** A string value (not a key) ended; its key or index is the innermost of `scanner.path`. */
  readonly stringEnded: (scanner: JsonScanner, canonicalStart: number) => BodyProblem | undefined
  /** The end of a chunk. */
  readonly checkpoint: (scanner: JsonScanner) => BodyProblem | undefined
}

const VALUE = 0, VALUE_OR_CLOSE = 1, KEY_OR_CLOSE = 2, KEY = 3, COLON = 4, AFTER_VALUE = 5, STRING = 6,
  ESCAPE = 7, UNICODE = 8, LOW_SURROGATE = 9, LOW_SURROGATE_U = 10, NUMBER = 11, LITERAL = 12, END = 13

const QUOTE = 0x22, BACKSLASH = 0x5c

export class JsonScanner {
  /** Where the scan is: one entry per open container, and the current string's first bytes. */
  readonly path = new JsonPath()
  private state = VALUE
  private position = 0
  private whitespace = 0
  private adjustment = 0
  private line = 1
  private lineStart = 0
  private sawValue = false
  private stringIsKey = false
  private stringStart = -1
  private unicodeDigits = 0
  private unicodeValue = 0
  private expectLow = false
  private utf8Need = 0
  private utf8Low = 0x80
  private utf8High = 0xbf
  private numberState = 0
  private literal: Uint8Array = LITERALS[0x74]
  private literalIndex = 0

  constructor(private readonly observer?: ScanObserver) {}

  get depth(): number {
    return this.path.depth
  }

  /** The canonical position: bytes read so far as compact JSON (see the module comment). */
  canonicalPosition(): number {
    return this.position - this.whitespace + this.adjustment
  }

  /** The canonical position where the string being read began, or -1 outside a string. */
  openStringStart(): number {
    return this.stringStart
  }

  /** Whether the string being read is a property name. */
  get inKey(): boolean {
    return this.stringIsKey
  }

  write(bytes: Uint8Array): BodyProblem | undefined {
    const base = this.position
    const length = bytes.length
    let i = 0
    while (i < length) {
      const state = this.state
      if (state === STRING) {
        // The hot loop: the bytes of a string up to its end, an escape, or a byte to look at.
        const runStart = i
        let need = this.utf8Need
        for (; i < length; i++) {
          const byte = bytes[i]
          if (need > 0) {
            if (byte < this.utf8Low || byte > this.utf8High) return this.encodingProblem(base + i)
            this.utf8Low = 0x80
            this.utf8High = 0xbf
            need--
          } else if (byte >= 0x80) {
            const lead = utf8Lead(byte)
            if (lead < 0) return this.encodingProblem(base + i)
            need = lead & 0xff
            this.utf8Low = (lead >> 8) & 0xff
            this.utf8High = lead >> 16
          } else if (byte === QUOTE || byte === BACKSLASH || byte < 0x20) break
        }
        this.utf8Need = need
        this.path.collect(bytes, runStart, i)
        if (i === length) break
        const byte = bytes[i]
        this.position = base + i
        if (byte < 0x20) return this.syntaxProblem("a control character in a string (escape it)")
        i++
        if (byte === BACKSLASH) {
          this.path.collect(bytes, i - 1, i)
          this.state = ESCAPE
          continue
        }
        this.position = base + i
        const problem = this.endString()
        if (problem !== undefined) return problem
        continue
      }
      if (state === NUMBER) {
        // Digits in the middle of a number need no more than a glance.
        let digits = this.numberState
        for (; i < length; i++) {
          const byte = bytes[i]
          if (byte >= 0x30 && byte <= 0x39 && inDigits(digits)) continue
          const next = nextNumberState(digits, byte)
          if (next < 0) break
          digits = next
        }
        this.numberState = digits
        if (i === length) break
        this.position = base + i
        if (!numberCanEnd(digits)) return this.syntaxProblem("an incomplete number")
        this.state = this.afterValue()
        continue // the byte after the number is read in the new state
      }
      const byte = bytes[i]
      if (state <= AFTER_VALUE || state === END) {
        if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) {
          this.whitespace++
          if (byte === 0x0a) {
            this.line++
            this.lineStart = base + i + 1
          }
          i++
          continue
        }
        this.position = base + i
        const problem = this.structural(byte)
        if (problem !== undefined) return problem
        i++
        continue
      }
      this.position = base + i
      switch (state) {
        case ESCAPE: {
          this.path.collect(bytes, i, i + 1)
          if (byte === 0x75) {
            this.state = UNICODE
            this.unicodeDigits = 0
            this.unicodeValue = 0
            break
          }
          const size = SIMPLE_ESCAPES[byte]
          if (size === undefined) return this.syntaxProblem(`an invalid escape \\${String.fromCharCode(byte)}`)
          this.path.markEscaped()
          this.adjustment += size - 2
          this.state = STRING
          break
        }
        case UNICODE: {
          this.path.collect(bytes, i, i + 1)
          const digit = hexValue(byte)
          if (digit < 0) return this.syntaxProblem("an invalid \\u escape (four hexadecimal digits expected)")
          this.unicodeValue = this.unicodeValue * 16 + digit
          if (++this.unicodeDigits === 4) {
            const problem = this.endUnicodeEscape()
            if (problem !== undefined) return problem
          }
          break
        }
        case LOW_SURROGATE:
        case LOW_SURROGATE_U: {
          const wanted = state === LOW_SURROGATE ? BACKSLASH : 0x75
          if (byte !== wanted) return this.surrogateProblem(this.unicodeValue)
          this.path.collect(bytes, i, i + 1)
          if (state === LOW_SURROGATE) this.state = LOW_SURROGATE_U
          else {
            this.state = UNICODE
            this.unicodeDigits = 0
            this.unicodeValue = 0
          }
          break
        }
        case LITERAL: {
          if (byte !== this.literal[this.literalIndex]) return this.unexpected(byte)
          if (++this.literalIndex === this.literal.length) this.state = this.afterValue()
          break
        }
      }
      i++
    }
    this.position = base + length
    return this.observer?.checkpoint(this)
  }

  /** The body is complete: anything left open is a syntax error. */
  end(): BodyProblem | undefined {
    if (this.state === NUMBER && numberCanEnd(this.numberState) && this.path.depth === 0) {
      this.state = END
    }
    if (this.state === END || (this.state === VALUE && !this.sawValue)) return undefined
    return this.syntaxProblem("an unexpected end of the body")
  }

  /** Punctuation and the first byte of a value (whitespace is skipped before). */
  private structural(byte: number): BodyProblem | undefined {
    switch (this.state) {
      case COLON:
        if (byte !== 0x3a) return this.unexpected(byte)
        this.state = VALUE
        return undefined
      case KEY_OR_CLOSE:
      case KEY:
        if (byte === 0x7d && this.state === KEY_OR_CLOSE) return this.close()
        if (byte !== QUOTE) return this.unexpected(byte)
        this.startString(true)
        return undefined
      case AFTER_VALUE: {
        const inObject = this.path.isObject(this.path.depth)
        if (byte === 0x2c) {
          this.state = inObject ? KEY : VALUE
          if (!inObject) this.path.nextIndex()
          return undefined
        }
        if (byte === (inObject ? 0x7d : 0x5d)) return this.close()
        return this.unexpected(byte)
      }
      case END:
        return this.unexpected(byte)
    }
    // VALUE or VALUE_OR_CLOSE
    if (byte === 0x5d && this.state === VALUE_OR_CLOSE) return this.close()
    this.sawValue = true
    if (byte === QUOTE) {
      this.startString(false)
      return undefined
    }
    if (byte === 0x7b || byte === 0x5b) {
      if (this.path.depth === MAX_NESTING_DEPTH) return tooDeep(this.path.pointer(), MAX_NESTING_DEPTH)
      const start = this.canonicalPosition()
      const isObject = byte === 0x7b
      this.path.push(isObject)
      this.state = isObject ? KEY_OR_CLOSE : VALUE_OR_CLOSE
      return this.observer?.opened(this, isObject, start)
    }
    if (byte === 0x2d || (byte >= 0x30 && byte <= 0x39)) {
      this.state = NUMBER
      this.numberState = numberStart(byte)
      return undefined
    }
    const literal = LITERALS[byte]
    if (literal === undefined) return this.unexpected(byte)
    this.state = LITERAL
    this.literal = literal
    this.literalIndex = 1
    return undefined
  }

  private close(): BodyProblem | undefined {
    const problem = this.observer?.closing(this)
    if (problem !== undefined) return problem
    this.path.pop()
    this.state = this.afterValue()
    return undefined
  }

  private afterValue(): number {
    return this.path.depth === 0 ? END : AFTER_VALUE
  }

  private startString(isKey: boolean) {
    this.state = STRING
    this.stringIsKey = isKey
    this.stringStart = this.canonicalPosition()
    this.path.startString(isKey)
  }

  private endString(): BodyProblem | undefined {
    const start = this.stringStart
    this.stringStart = -1
    if (this.stringIsKey) {
      this.path.setKeyFromString()
      this.state = COLON
      return undefined
    }
    this.state = this.afterValue()
    return this.observer?.stringEnded(this, start)
  }

  private endUnicodeEscape(): BodyProblem | undefined {
    const code = this.unicodeValue
    this.path.markEscaped()
    this.state = STRING
    if (this.expectLow) {
      this.expectLow = false
      if (code < 0xdc00 || code > 0xdfff) return this.surrogateProblem(code)
      this.adjustment -= 2 // the pair's 12 bytes are 4 in UTF-8; the high half counted -6
      return undefined
    }
    if (code >= 0xd800 && code <= 0xdbff) {
      this.expectLow = true
      this.adjustment -= 6
      this.state = LOW_SURROGATE
      return undefined
    }
    if (code >= 0xdc00 && code <= 0xdfff) return this.surrogateProblem(code)
    if (code === 0) return nulCharacter(this.currentPointer())
    this.adjustment += canonicalSize(code) - 6
    return undefined
  }

  /** The pointer of the string being read: its value's field, or for a key the object holding it. */
  private currentPointer(): string {
    return this.stringIsKey ? this.path.pointer(false) : this.path.pointer()
  }

  private surrogateProblem(code: number): BodyProblem {
    return unpairedSurrogate(this.currentPointer(), code, this.stringIsKey)
  }

  private encodingProblem(position: number): BodyProblem {
    this.position = position
    return notUtf8(this.currentPointer())
  }

  private unexpected(byte: number): BodyProblem {
    return this.syntaxProblem(unexpectedByte(byte))
  }

  private syntaxProblem(what: string): BodyProblem {
    return notJson(what, this.line, this.position - this.lineStart + 1)
  }
}
