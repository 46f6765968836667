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

export const findJsonSyntaxError = (text: string): JsonSyntaxError | undefined => {
  let i = 0
  const fail = (message: string): never => {
    throw { offset: i, message } satisfies JsonSyntaxError
  }
  const skipWhitespace = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++
  }
  const expect = (literal: string) => {
    if (text.startsWith(literal, i)) {
      i += literal.length
    } else {
      fail(`expected ${JSON.stringify(literal)}`)
    }
  }
  const string = () => {
    i++ // the opening quote
    while (true) {
      const char = text[i]
      if (char === undefined) fail("unterminated string")
      if (char === "\"") {
        i++
        return
      }
      if (char < " ") fail("control character in a string; escape it")
      if (char === "\\") {
        i++
        const escape = text[i]
        if (escape === "u") {
          for (let k = 1; k <= 4; k++) {
            if (!/[0-9a-fA-F]/.test(text[i + k] ?? "")) {
              i += k
              fail("\\u must be followed by four hex digits")
            }
          }
          i += 5
        } else if (escape !== undefined && "\"\\/bfnrt".includes(escape)) {
          i++
        } else {
          fail(`invalid escape \\${escape ?? ""}`)
        }
      } else {
        i++
      }
    }
  }
  const number = () => {
    const match = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i))
    if (match === null || match[0] === "-") fail(`invalid number`)
    i += match![0].length
  }
  /** A value inside `depth` arrays and objects. */
  const value = (depth: number) => {
    skipWhitespace()
    const char = text[i]
    if ((char === "{" || char === "[") && depth >= MAX_NESTING_DEPTH) {
      fail(`arrays and objects nest deeper than ${MAX_NESTING_DEPTH} levels`)
    }
    if (char === "{") {
      i++
      skipWhitespace()
      if (text[i] === "}") {
        i++
        return
      }
      while (true) {
        skipWhitespace()
        if (text[i] !== "\"") fail(`expected a property name in double quotes, found ${describe(text[i])}`)
        string()
        skipWhitespace()
        if (text[i] !== ":") fail(`expected ":", found ${describe(text[i])}`)
        i++
        value(depth + 1)
        skipWhitespace()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "}") {
          i++
          return
        }
        fail(`expected "," or "}", found ${describe(text[i])}`)
      }
    } else if (char === "[") {
      i++
      skipWhitespace()
      if (text[i] === "]") {
        i++
        return
      }
      while (true) {
        value(depth + 1)
        skipWhitespace()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "]") {
          i++
          return
        }
        fail(`expected "," or "]", found ${describe(text[i])}`)
      }
    } else if (char === "\"") {
      string()
    } else if (char === "t") {
      expect("true")
    } else if (char === "f") {
      expect("false")
    } else if (char === "n") {
      expect("null")
    } else if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) {
      number()
    } else {
      fail(`expected a value, found ${describe(char)}`)
    }
  }
  try {
    value(0)
    skipWhitespace()
    if (i < text.length) fail(`unexpected ${describe(text[i])} after the JSON value`)
    return undefined
  } catch (error) {
    if (typeof error === "object" && error !== null && "offset" in error) return error as JsonSyntaxError
    throw error
  }
}
