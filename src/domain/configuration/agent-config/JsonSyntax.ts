/**
 * Finds the first syntax error of a JSON text (RFC 8259) and its offset, which `JSON.parse`
 * does not report reliably on every Node version. Arrays and objects nested deeper than
 * MAX_NESTING_DEPTH are an error here too, found where the first one too deep opens: the check
 * recurses once per level, so it never goes deeper than that, and what passes it is shallow
 * enough for the recursive parsers that read it next.
 */
import { MAX_NESTING_DEPTH } from "../../shared/Nesting.ts"

export interface JsonSyntaxError {
  readonly offset: number
  readonly message: string
}

const describe = (char: string | undefined) => char === undefined ? "the end of the text" : JSON.stringify(char)

/** The text being checked and the offset the check has read up to. */
interface Cursor {
  readonly text: string
  at: number
}

const fail = (cursor: Cursor, message: string): never => {
  throw { offset: cursor.at, message } satisfies JsonSyntaxError
}

const isWhitespace = (char: string) => char === " " || char === "\t" || char === "\n" || char === "\r"

const skipWhitespace = (cursor: Cursor) => {
  while (cursor.at < cursor.text.length && isWhitespace(cursor.text[cursor.at])) cursor.at++
}

const expectLiteral = (cursor: Cursor, literal: string) => {
  if (cursor.text.startsWith(literal, cursor.at)) {
    cursor.at += literal.length
  } else {
    fail(cursor, `expected ${JSON.stringify(literal)}`)
  }
}

/** A string, from its opening quote to past its closing one. */
const skipString = (cursor: Cursor) => {
  const { text } = cursor
  cursor.at++ // the opening quote
  while (true) {
    const char = text[cursor.at]
    if (char === undefined) fail(cursor, "unterminated string")
    if (char === "\"") {
      cursor.at++
      return
    }
    if (char < " ") fail(cursor, "control character in a string; escape it")
    if (char === "\\") {
      cursor.at++
      skipEscape(cursor)
    } else {
      cursor.at++
    }
  }
}

/** The escape after a backslash in a string. */
const skipEscape = (cursor: Cursor) => {
  const { text } = cursor
  const escape = text[cursor.at]
  if (escape === "u") {
    for (let k = 1; k <= 4; k++) {
      if (!/[0-9a-fA-F]/.test(text[cursor.at + k] ?? "")) {
        cursor.at += k
        fail(cursor, "\\u must be followed by four hex digits")
      }
    }
    cursor.at += 5
  } else if (escape !== undefined && "\"\\/bfnrt".includes(escape)) {
    cursor.at++
  } else {
    fail(cursor, `invalid escape \\${escape ?? ""}`)
  }
}

const skipNumber = (cursor: Cursor) => {
  const match = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(cursor.text.slice(cursor.at))
  if (match === null || match[0] === "-") fail(cursor, `invalid number`)
  cursor.at += match![0].length
}

/**
 * An object or an array, from its opening bracket to past `close`: its members, each read by
 * `member`, separated by commas.
 */
const skipMembers = (cursor: Cursor, close: "}" | "]", member: () => void) => {
  const { text } = cursor
  cursor.at++
  skipWhitespace(cursor)
  if (text[cursor.at] === close) {
    cursor.at++
    return
  }
  while (true) {
    member()
    skipWhitespace(cursor)
    if (text[cursor.at] === ",") {
      cursor.at++
      continue
    }
    if (text[cursor.at] === close) {
      cursor.at++
      return
    }
    fail(cursor, `expected "," or "${close}", found ${describe(text[cursor.at])}`)
  }
}

/** An object's member, its name and value, the value inside `depth` arrays and objects. */
const skipProperty = (cursor: Cursor, depth: number) => {
  const { text } = cursor
  skipWhitespace(cursor)
  if (text[cursor.at] !== "\"") {
    fail(cursor, `expected a property name in double quotes, found ${describe(text[cursor.at])}`)
  }
  skipString(cursor)
  skipWhitespace(cursor)
  if (text[cursor.at] !== ":") fail(cursor, `expected ":", found ${describe(text[cursor.at])}`)
  cursor.at++
  skipValue(cursor, depth)
}

/** A value inside `depth` arrays and objects. */
const skipValue = (cursor: Cursor, depth: number): void => {
  skipWhitespace(cursor)
  const char = cursor.text[cursor.at]
  if ((char === "{" || char === "[") && depth >= MAX_NESTING_DEPTH) {
    fail(cursor, `arrays and objects nest deeper than ${MAX_NESTING_DEPTH} levels`)
  }
  if (char === "{") {
    skipMembers(cursor, "}", () => skipProperty(cursor, depth + 1))
  } else if (char === "[") {
    skipMembers(cursor, "]", () => skipValue(cursor, depth + 1))
  } else if (char === "\"") {
    skipString(cursor)
  } else if (char === "t") {
    expectLiteral(cursor, "true")
  } else if (char === "f") {
    expectLiteral(cursor, "false")
  } else if (char === "n") {
    expectLiteral(cursor, "null")
  } else if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) {
    skipNumber(cursor)
  } else {
    fail(cursor, `expected a value, found ${describe(char)}`)
  }
}

export const findJsonSyntaxError = (text: string): JsonSyntaxError | undefined => {
  const cursor: Cursor = { text, at: 0 }
  try {
    skipValue(cursor, 0)
    skipWhitespace(cursor)
    if (cursor.at < text.length) fail(cursor, `unexpected ${describe(text[cursor.at])} after the JSON value`)
    return undefined
  } catch (error) {
    if (typeof error === "object" && error !== null && "offset" in error) return error as JsonSyntaxError
    throw error
  }
}
