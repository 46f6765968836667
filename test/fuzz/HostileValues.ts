/**
 * What a hostile client sends: strings Postgres cannot store or that look like something else,
 * values of the wrong type, integers written every way but plain decimal, nesting thousands of
 * levels deep, ids of nothing and garbage ids, and content types.
 */
import fc from "fast-check"
import { randomBytes } from "node:crypto"

/** Lone UTF-16 surrogates: valid JSON escapes, not storable text. */
const LONE_SURROGATES = ["\ud800", "\udfff", "a\ud83d", "\udc00b", "\ud83d\ud83d"]

/** Strings with characters text columns cannot hold (NUL) or that no name should contain. */
const ODD_STRINGS = [
  ...LONE_SURROGATES,
  "\u0000",
  "a\u0000b",
  "\u200d",
  "\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67",
  "\u200f",
  "evil\u202etxt.exe",
  "\ufeffname",
  "e\u0301\u0301\u0301",
  "\u0001\u001f\u007f\u0085",
  "\u2028\u2029",
  "  padded  ",
  " ",
  "",
  "\n",
  "0x10",
  "1e2",
  "-1",
  "NaN",
  "Infinity",
  "9".repeat(400),
  "'; DROP TABLE users; --",
  "%s%n%x",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "__proto__",
  "null"
]

/** Any UTF-16 code unit, lone surrogates and controls included. */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit))

export interface OddString {
  readonly value: string
  /** A JavaScript expression for the value, when it is too long to print. */
  readonly recipe?: string
}

const long = (unit: string, times: number): OddString => ({ value: unit.repeat(times), recipe: `${JSON.stringify(unit)}.repeat(${times})` })

export const oddString: fc.Arbitrary<OddString> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ODD_STRINGS).map((value) => ({ value })) },
  { weight: 2, arbitrary: fc.string({ unit: anyCodeUnit, maxLength: 12 }).map((value) => ({ value })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      long("x", 65_537),
      long("é", 300_000),
      long("\ud83d\ude00", 2_000),
      long("x", 1_100_000)
    )
  }
)

/** A NUL character or a UTF-16 surrogate without its partner: text Postgres cannot store. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Whether any string (or object key) in a JSON value holds text Postgres cannot store (no recursion: values may be deep). */
export const holdsUnstorableText = (value: unknown): boolean => {
  const pending = [value]
  while (pending.length > 0) {
    const next = pending.pop()
    if (typeof next === "string" && UNSTORABLE.test(next)) return true
    if (Array.isArray(next)) pending.push(...next)
    else if (typeof next === "object" && next !== null) {
      for (const [key, item] of Object.entries(next)) {
        if (UNSTORABLE.test(key)) return true
        pending.push(item)
      }
    }
  }
  return false
}

/** How deeply JSON text nests arrays and objects (brackets inside strings do not count). */
export const nestingDepth = (json: string): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let index = 0; index < json.length; index++) {
    const char = json[index]
    if (inString) {
      if (char === "\\") index++
      else if (char === "\"") inString = false
    } else if (char === "\"") inString = true
    else if (char === "[" || char === "{") deepest = Math.max(deepest, ++depth)
    else if (char === "]" || char === "}") depth--
  }
  return deepest
}

/** Values of every JSON type, and numbers the schema's integers do not allow. */
export const wrongValue: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53 + 2,
  1e300,
  "",
  "text",
  "100",
  "0x10",
  [],
  [1, 2],
  {},
  { nested: { deeper: [] } }
)

/** JSON number literals that are not plain integers (written into the body text as they are). */
export const NUMBER_LITERALS = ["0x10", "1e2", "1E400", "-0", "01", ".5", "5.", "+1", "NaN", "Infinity", "-1", "99999999999999999999999"]

/** Whole bodies that are not a JSON object, or not JSON at all. */
export const BROKEN_BODIES = [
  "",
  "null",
  "[]",
  "\"text\"",
  "42",
  "{",
  "{\"a\":1,}",
  "{'a': 1}",
  "{\"a\": 1} trailing",
  "{\"a\": 1}{\"b\": 2}",
  "{/* comment */}",
  "\ufeff{}",
  "{\"a\": \"\\x41\"}",
  "{\"a\": \"\\u12\"}",
  "{\"a\": \"unterminated}"
]

/** Integers as a query or path parameter may wrongly carry them; none is a plain decimal in range. */
export const MALFORMED_INTEGERS = [
  "0x10",
  "1e2",
  "-1",
  "1.5",
  " 5",
  "5 ",
  "+5",
  "",
  "abc",
  "5abc",
  "99999999999999999999999",
  "NaN",
  "Infinity",
  "0b101",
  "1_000",
  "\u0663",
  "\uff15"
]

/** Names of query parameters no operation declares. */
export const UNKNOWN_PARAMETERS = ["afterSequence", "LIMIT", "limit[]", "__proto__", "x", "cursor ", "status[]"]

/** Query texts whose encoding itself is odd. */
export const ODD_QUERIES = ["%", "%zz", "%00", "%ud800", "a=b=c", "&&", "=", "?x=1", "limit", "%ED%A0%80=1"]

/** A valid-looking id (prefix and 26 base32 characters) of nothing. */
export const idOfNothing = (prefix: string) =>
  fc.stringMatching(/^[a-z2-7]{26}$/).map((tail) => `${prefix}_${tail}`)

/** Path segments that are no id at all (already encoded as they go on the wire). */
export const garbageSegment = (prefix: string) =>
  fc.constantFrom(
    `${prefix}_`,
    `${prefix}_${"a".repeat(25)}`,
    `${prefix}_${"A".repeat(26)}`,
    `${prefix}_${"a".repeat(26)}x`,
    `${prefix.toUpperCase()}_${"a".repeat(26)}`,
    "0",
    "-1",
    "null",
    "%00",
    "%ED%A0%80",
    "%F0%9F%98%80",
    "%zz",
    "%2e%2e",
    "a%2Fb",
    "%27%20OR%201%3D1%20--",
    "x".repeat(3000),
    randomBytes(8).toString("hex")
  )

/** A body nested `depth` levels deep, as text and as a recipe that rebuilds it. */
export interface DeepValue {
  readonly text: string
  readonly recipe: string
  readonly description: string
}

export const deepValue: fc.Arbitrary<DeepValue> = fc.tuple(
  fc.oneof({ weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }) }, { weight: 3, arbitrary: fc.integer({ min: 1_000, max: 8_000 }) }),
  fc.constantFrom("array", "object", "mixed")
).map(([depth, kind]) => {
  const open = kind === "array" ? "[" : kind === "object" ? "{\"a\":" : "[{\"a\":"
  const close = kind === "array" ? "]" : kind === "object" ? "}" : "}]"
  const times = kind === "mixed" ? Math.ceil(depth / 2) : depth
  return {
    description: `${kind === "mixed" ? times * 2 : times} levels of ${kind === "mixed" ? "arrays and objects" : `${kind}s`}`,
    text: open.repeat(times) + "1" + close.repeat(times),
    recipe: `${JSON.stringify(open)}.repeat(${times})+"1"+${JSON.stringify(close)}.repeat(${times})`
  }
})

/** Content types a JSON body must be sent with. */
export const JSON_CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8"]

/** A request's content type: none, one, or several Content-Type headers. */
export type ContentTypes = string | ReadonlyArray<string> | undefined

/**
 * Content types that are plainly not JSON (and no content type at all, or several headers, of
 * which Node would keep the first): the server must answer 415.
 */
export const NOT_JSON_CONTENT_TYPES: ReadonlyArray<ContentTypes> = [
  undefined,
  ["application/json", "text/plain"],
  ["text/plain", "application/json"],
  "",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/octet-stream"
]

/** Content types whose meaning is debatable: only the general properties hold. */
export const ODD_CONTENT_TYPES = [
  "Application/JSON",
  "application/json; charset=utf-16",
  "application/vnd.api+json",
  "application/json, text/plain",
  "*/*",
  ";"
]
