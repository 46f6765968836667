/**
 * Text received from outside the requests made storable (StorableText.ts, StorableJson.ts;
 * docs/runtime.md, "Text the platform receives"): each NUL and each unpaired surrogate half
 * becomes U+FFFD, pairs are kept, an array or object nested deeper than 64 levels becomes a
 * marker, and a value holding none of these is returned as it is, not copied. The walk uses a
 * stack, so a value nested 100,000 levels deep is no problem.
 */
import { describe, expect, it } from "vitest"
import { storableText, unstorableCharacterOf } from "../../src/domain/shared/StorableText.ts"
import { DEEPER_THAN_LIMIT, storableJson } from "../../src/services/shared/StorableJson.ts"

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

  it("keeps 64 levels of nesting, and puts a marker in place of the 65th, walking 100,000 levels without recursion", () => {
    const nested = (depth: number, leaf: string): unknown => {
      let value: unknown = leaf
      for (let level = 0; level < depth; level++) value = level % 2 === 0 ? [value] : { k: value }
      return value
    }
    /** The value `depth` levels down from `value` (`nested` built it). */
    const down = (value: unknown, depth: number, total: number) => {
      for (let level = total - 1; level >= total - depth; level--) {
        value = level % 2 === 0 ? (value as Array<unknown>)[0] : (value as { k: unknown }).k
      }
      return value
    }
    const atLimit = nested(64, "leaf")
    expect(storableJson(atLimit)).toBe(atLimit)
    // The 65th container is the marker, whatever is inside it, clean or not.
    for (const leaf of ["leaf", "le\u0000af"]) {
      const deep = nested(100_000, leaf)
      const copied = storableJson(deep)
      expect(down(copied, 64, 100_000)).toBe(DEEPER_THAN_LIMIT)
      expect(down(deep, 64, 100_000)).not.toBe(DEEPER_THAN_LIMIT)
      // 64 levels, half arrays (`[`, `]`) and half objects (`{"k":`, `}`), around the marker.
      expect(JSON.stringify(copied)).toHaveLength(32 * 2 + 32 * 6 + JSON.stringify(DEEPER_THAN_LIMIT).length)
    }
    // Beside something to replace, the copy keeps 64 levels too.
    const both = { text: "a\u0000", deep: nested(63, "leaf") }
    expect(storableJson(both)).toEqual({ text: `a${R}`, deep: nested(63, "leaf") })
    expect(DEEPER_THAN_LIMIT).toBe("[left out: nested deeper than 64 levels]")
  })
})
