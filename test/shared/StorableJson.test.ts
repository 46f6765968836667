/**
 * Text received from outside the requests made storable (StorableText.ts, StorableJson.ts;
 * docs/runtime.md, "Text the platform receives"): each NUL and each unpaired surrogate half
 * becomes U+FFFD, pairs are kept, and a value holding neither is returned as it is, not copied.
 * The walk uses a stack, so a value nested 100,000 levels deep is no problem.
 */
import { describe, expect, it } from "vitest"
import { storableText, unstorableCharacterOf } from "../../src/domain/shared/StorableText.ts"
import { storableJson } from "../../src/services/shared/StorableJson.ts"

const R = "\ufffd"

describe("storableText", () => {
  it("replaces each NUL and each unpaired half, keeps pairs and everything else", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["plain", "plain"],
      ["", ""],
      ["a\u0000b\u0000", `a${R}b${R}`],
      ["x\ud800y", `x${R}y`],
      ["\udc00", R],
      ["end\ud83d", `end${R}`],
      ["😀 pair", "😀 pair"],
      ["\udc00\ud800", `${R}${R}`],
      ["\ud800\ud83d\ude00\udc00", `${R}😀${R}`],
      ["\ud83d\ude00\ude00", `😀${R}`],
      ["\u0001\u007f\ufffe", "\u0001\u007f\ufffe"]
    ]
    for (const [input, expected] of cases) {
      expect(storableText(input), JSON.stringify(input)).toBe(expected)
      expect(unstorableCharacterOf(storableText(input))).toBeUndefined()
    }
  })
})

describe("storableJson", () => {
  it("returns a value with nothing to replace as it is", () => {
    const value = { a: [1, "two", { b: "😀", c: null, d: true, e: 1.5 }], f: "g", h: [] }
    expect(storableJson(value)).toBe(value)
    expect(storableJson("text")).toBe("text")
    expect(storableJson(null)).toBe(null)
    expect(storableJson(7)).toBe(7)
  })

  it("copies a value with something to replace, in strings and property names at any depth, leaving the original alone", () => {
    const text = '{"a":[1,"t\\u0000o",{"k\\u0000":"\\ud800","n":null}],"keep":"😀","flag":false}'
    const original = JSON.parse(text)
    expect(storableJson(original)).toEqual({ a: [1, `t${R}o`, { [`k${R}`]: R, n: null }], keep: "😀", flag: false })
    expect(original).toEqual(JSON.parse(text))
    expect(storableJson("a\u0000")).toBe(`a${R}`)
  })

  it("keeps a property named __proto__ as a property, not the copy's prototype", () => {
    const copied = storableJson(JSON.parse('{"__proto__":{"x":"\\u0000"},"y":1}')) as Record<string, unknown>
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype)
    expect(Object.hasOwn(copied, "__proto__")).toBe(true)
    expect(Object.getOwnPropertyDescriptor(copied, "__proto__")?.value).toEqual({ x: R })
  })

  it("walks 100,000 levels of nesting without recursion, clean or not", () => {
    let clean: unknown = "leaf"
    let dirty: unknown = "le\u0000af"
    for (let level = 0; level < 100_000; level++) {
      clean = level % 2 === 0 ? [clean] : { k: clean }
      dirty = level % 2 === 0 ? [dirty] : { k: dirty }
    }
    expect(storableJson(clean)).toBe(clean)
    let copied = storableJson(dirty) as unknown
    for (let level = 100_000 - 1; level >= 0; level--) copied = level % 2 === 0 ? (copied as Array<unknown>)[0] : (copied as { k: unknown }).k
    expect(copied).toBe(`le${R}af`)
  })
})
