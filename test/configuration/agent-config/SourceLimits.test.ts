import { describe, expect, it } from "@effect/vitest"
import { isMap, isPair, isSeq, LineCounter, parseDocument, Parser, stringify } from "yaml"
import { parseYamlCst, SOURCE_LIMITS } from "../../../src/domain/configuration/agent-config/SourceLimits.ts"

/** The offset of the first token at which `text` nests collections deeper than `limit` levels, whatever its length. */
const findYamlTooDeep = (text: string, limit: number): number | undefined => {
  const result = parseYamlCst(text, { depth: limit, tokens: Infinity, aliases: Infinity })
  return "exceeded" in result && result.exceeded === "depth" ? result.at : undefined
}

/** How deep the `yaml` package nests the collections of `text` (a pair in a flow sequence is a mapping). */
const depthOf = (text: string): number => {
  const doc = parseDocument(text)
  expect(doc.errors).toEqual([])
  let max = 0
  const pending: Array<readonly [unknown, number]> = [[doc.contents, 0]]
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!
    if (isMap(node) || isSeq(node)) {
      max = Math.max(max, depth + 1)
      for (const item of node.items) pending.push([item, depth + 1])
    } else if (isPair(node)) {
      pending.push([node.key, depth], [node.value, depth])
    }
  }
  return max
}

/** The smallest limit the text does not go over. */
const countOf = (text: string) => {
  let limit = 0
  while (findYamlTooDeep(text, limit) !== undefined) limit++
  return limit
}

/** A value about `depth` levels deep whose levels alternate, by `pattern`, objects and arrays with scalars of every kind beside them. */
const nested = (depth: number, pattern: number): unknown => {
  let value: unknown = "leaf: with # and 'quotes'"
  for (let level = depth; level >= 1; level--) {
    const scalars = ["plain", "multi\nline\ntext", "- dash", "[not, flow]", "x: y", 42, null, "  spaced  "]
    const beside = scalars[(level + pattern) % scalars.length]
    value = (level * 7 + pattern) % 3 === 0
      ? [beside, value, { k: beside }]
      : { [`key${level}`]: value, other: beside, list: [beside] }
  }
  return value
}

describe("findYamlTooDeep", () => {
  it("counts the levels of well-formed YAML as the yaml package nests them, in block and flow styles", () => {
    for (let pattern = 0; pattern < 6; pattern++) {
      for (const options of [{}, { flowCollectionPadding: false, collectionStyle: "flow" as const }, { indentSeq: false }]) {
        for (const depth of [1, 5, 62, 63, 64, 65]) {
          const text = stringify(nested(depth, pattern), { ...options, lineWidth: 0 })
          const levels = depthOf(text)
          expect(countOf(text)).toBe(levels)
          expect(findYamlTooDeep(text, 64) === undefined).toBe(levels <= 64)
        }
      }
    }
  })

  it("counts compact and explicit forms, block scalars, comments and documents", () => {
    const texts = [
      "- - - x\n  - y\n- z\n",
      "a:\n- b:\n  - c: |\n      text\n      - not a sequence\n    d: 1\n",
      "? - a\n  - b\n: - c\n",
      "a: [b: c, {d: [e]}]\n",
      "# c\n--- \na: 'x\n  - y'\nb: \"[z\"\n...\n",
      "a: &x [1, [2]]\nb: *x\n",
      "a: >-\n  [[[[\n  {{{{\nb: c\n"
    ]
    for (const text of texts) expect(countOf(text)).toBe(depthOf(text))
  })

  it("reports the token that opens the level over the limit", () => {
    expect(findYamlTooDeep("a: [[[x]]]\n", 3)).toBe(5)
    expect(findYamlTooDeep("a:\n  b:\n    c: 1\n", 2)).toBe(12)
    expect(findYamlTooDeep("- - - x\n", 2)).toBe(4)
    expect(findYamlTooDeep("a: '[[[['\n", 1)).toBeUndefined()
  })

  it("parses as the yaml package's Parser does when not too deep, and stops at the level over the limit", () => {
    const text = "# c\na: [b, {c: d}]\ne:\n  - |\n    text\n  - ? f\n    : g\n"
    const expected = new LineCounter()
    const actual = new LineCounter()
    expect(parseYamlCst(text, SOURCE_LIMITS, actual.addNewLine)).toEqual({ tokens: Array.from(new Parser(expected.addNewLine).parse(text)) })
    expect(actual.lineStarts).toEqual(expected.lineStarts)
    expect(parseYamlCst("- ".repeat(500_000) + "x\n", SOURCE_LIMITS)).toEqual({ exceeded: "depth", at: 128 })
    expect(parseYamlCst("a: " + "[".repeat(500_000), SOURCE_LIMITS)).toEqual({ exceeded: "depth", at: 66 })
  })

  it("stops at the token past the token limit, and at the alias past the alias limit", () => {
    const limits = { depth: 64, tokens: 10, aliases: 2 }
    // doc-mode, scalar mark, "a", ":", " ", scalar mark, "b", line break: 8 tokens.
    expect(parseYamlCst("a: b\n", limits)).toHaveProperty("tokens")
    // Then a scalar mark, "c" and ":", the 11th, at offset 6.
    expect(parseYamlCst("a: b\nc: d\n", limits)).toEqual({ exceeded: "tokens", at: 6 })
    expect(parseYamlCst("[&x a, *x, *x]", { ...limits, tokens: 100 })).toHaveProperty("tokens")
    expect(parseYamlCst("[&x a, *x, *x, *x]", { ...limits, tokens: 100 })).toEqual({ exceeded: "aliases", at: 15 })
    // A scalar's text beginning with `*` is not an alias: a top-level block scalar's, whose text
    // may start at column 0, or a quoted one's.
    expect(parseYamlCst("|\n*b\n", { ...limits, aliases: 0 })).toHaveProperty("tokens")
    expect(parseYamlCst("['*d', \"*f\"]", { ...limits, aliases: 0 })).toHaveProperty("tokens")
  })
})
