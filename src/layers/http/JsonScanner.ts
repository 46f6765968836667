/**
 * A streaming check of a JSON request body, fed chunk by chunk as the bytes arrive, before
 * anything parses it. It checks the syntax, bounds the nesting at MAX_NESTING_DEPTH, has the
 * inside of each string read by a JsonStringReader (UTF-8, escapes, `\u0000` and unpaired
 * surrogates refused), and refuses a key given twice in one object or named `__proto__` (which
 * a JavaScript object cannot hold as data: decoding would drop it), naming the field of any
 * problem by its JSON Pointer (JsonPath). No recursion anywhere: the nesting is a stack of at
 * most MAX_NESTING_DEPTH entries. A
 * `ScanObserver` (ContentBlockBudget) follows the structure to enforce limits on parts of the body
 * while they stream in.
 *
 * Sizes: the scanner keeps the "canonical" position, the number of bytes the JSON read so far
 * takes when written compactly by `JSON.stringify` (whitespace between tokens dropped, escapes
 * counted as `JSON.stringify` writes the character), so a limit on part of a body means the same
 * whatever the formatting.
 */
import { MAX_NESTING_DEPTH } from "../../domain/shared/Nesting.ts"
import {
  type BodyProblem,
  byteOrderMark,
  duplicateKey,
  notJson,
  notUtf8,
  nulCharacter,
  protoKey,
  tooDeep,
  unexpectedByte,
  unpairedSurrogate
} from "./BodyProblems.ts"
import { inDigits, LITERALS, nextNumberState, numberCanEnd, numberStart } from "./JsonGrammar.ts"
import { JsonPath } from "./JsonPath.ts"
import {
  ESCAPE_DONE,
  INVALID_ESCAPE,
  INVALID_UNICODE_ESCAPE,
  JsonStringReader,
  NUL_CHARACTER
} from "./JsonStringReader.ts"
import type { ScanObserver } from "./ScanObserver.ts"

export { MAX_NESTING_DEPTH }

const VALUE = 0, VALUE_OR_CLOSE = 1, KEY_OR_CLOSE = 2, KEY = 3, COLON = 4, AFTER_VALUE = 5, STRING = 6,
  ESCAPE = 7, NUMBER = 8, LITERAL = 9, END = 10

const QUOTE = 0x22, BACKSLASH = 0x5c

const BYTE_ORDER_MARK = [0xef, 0xbb, 0xbf]

/** Whether the body's first bytes are those of a byte order mark, as far as they have arrived (0xEF starts no JSON anyway). */
const startsAsByteOrderMark = (bytes: Uint8Array) =>
  bytes.length > 0 && BYTE_ORDER_MARK.every((byte, i) => i >= bytes.length || bytes[i] === byte)

export class JsonScanner {
  /** Where the scan is: one entry per open container, and the current string's first bytes. */
  readonly path = new JsonPath()
  private readonly string = new JsonStringReader()
  private state = VALUE
  private position = 0
  private whitespace = 0
  private line = 1
  private lineStart = 0
  private sawValue = false
  private stringIsKey = false
  private stringStart = -1
  private numberState = 0
  private literal: Uint8Array = LITERALS[0x74]
  private literalIndex = 0

  private readonly observer: ScanObserver | undefined

  constructor(observer?: ScanObserver) {
    this.observer = observer
  }

  get depth(): number {
    return this.path.depth
  }

  /** The canonical position: bytes read so far as compact JSON (see the module comment). */
  canonicalPosition(): number {
    return this.position - this.whitespace + this.string.sizeChange
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
    if (base === 0 && startsAsByteOrderMark(bytes)) return byteOrderMark()
    let i = 0
    while (i < length) {
      const state = this.state
      if (state === STRING) {
        // The hot loop: the text of a string up to its end, an escape, or a byte to look at.
        const stop = this.string.readText(bytes, i)
        if (stop < 0) return notUtf8(this.currentPointer())
        this.path.collect(bytes, i, stop)
        if (stop === length) break
        const byte = bytes[stop]
        this.position = base + stop
        if (byte < 0x20) return this.syntaxProblem("a control character in a string (escape it)")
        i = stop + 1
        if (byte === BACKSLASH) {
          this.path.collect(bytes, stop, i)
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
      if (state === ESCAPE) {
        const outcome = this.string.readEscape(byte)
        if (outcome > ESCAPE_DONE) return this.escapeProblem(outcome, byte)
        this.path.collect(bytes, i, i + 1)
        if (outcome === ESCAPE_DONE) {
          this.path.markEscaped()
          this.state = STRING
        }
      } else { // LITERAL
        if (byte !== this.literal[this.literalIndex]) return this.unexpected(byte)
        if (++this.literalIndex === this.literal.length) this.state = this.afterValue()
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
      const isNew = this.path.setKeyFromString()
      this.state = COLON
      if (this.path.keyIs(this.path.depth, "__proto__")) return protoKey(this.path.pointer())
      return isNew ? undefined : duplicateKey(this.path.pointer())
    }
    this.state = this.afterValue()
    return this.observer?.stringEnded(this, start)
  }

  /** The pointer of the string being read: its value's field, or for a key the object holding it. */
  private currentPointer(): string {
    return this.stringIsKey ? this.path.pointer(false) : this.path.pointer()
  }

  /** Why the escape byte `byte` is refused (`outcome` from the string reader). */
  private escapeProblem(outcome: number, byte: number): BodyProblem {
    switch (outcome) {
      case INVALID_ESCAPE:
        return this.syntaxProblem(`an invalid escape \\${String.fromCharCode(byte)}`)
      case INVALID_UNICODE_ESCAPE:
        return this.syntaxProblem("an invalid \\u escape (four hexadecimal digits expected)")
      case NUL_CHARACTER:
        return nulCharacter(this.currentPointer())
      default: // UNPAIRED_SURROGATE
        return unpairedSurrogate(this.currentPointer(), this.string.code, this.stringIsKey)
    }
  }

  private unexpected(byte: number): BodyProblem {
    return this.syntaxProblem(unexpectedByte(byte))
  }

  private syntaxProblem(what: string): BodyProblem {
    return notJson(what, this.line, this.position - this.lineStart + 1)
  }
}
