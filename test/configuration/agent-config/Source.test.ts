import { describe, expect, it } from "@effect/vitest"
import { LineCounter, parseDocument } from "yaml"
import { parseSource } from "../../../src/domain/configuration/agent-config/Source.ts"

const parsed = (text: string, format: "yaml" | "json") => {
  const result = parseSource(text, format)
  if (result._tag !== "Parsed") throw new Error(JSON.stringify(result.issues))
  return result.source
}

describe("parseSource", () => {
  it("positions an issue at a value, or at its key", () => {
    const source = parsed("a:\n  b: [1, 2, {c: 3}]\n", "yaml")
    expect(source.value).toEqual({ a: { b: [1, 2, { c: 3 }] } })
    expect(source.issueAt(["a", "b", 2, "c"], "m")).toEqual({ path: "/a/b/2/c", message: "m", line: 2, column: 17 })
    expect(source.issueAt(["a", "b"], "m", "key")).toMatchObject({ line: 2, column: 3 })
    expect(source.issueAt(["a", "b", 1], "m")).toMatchObject({ line: 2, column: 10 })
  })

  it("falls back to the deepest node that exists", () => {
    const source = parsed(`{\n  "a": {\n    "b": 1\n  }\n}`, "json")
    expect(source.issueAt(["a", "missing", "deeper"], "m")).toEqual({
      path: "/a/missing/deeper",
      message: "m",
      line: 2,
      column: 8
    })
    expect(source.issueAt([], "m")).toMatchObject({ path: "", line: 1, column: 1 })
  })

  it("escapes pointer segments", () => {
    const source = parsed(`{"a/b": {"c~d": 1}}`, "json")
    expect(source.issueAt(["a/b", "c~d"], "m")).toEqual({ path: "/a~1b/c~0d", message: "m", line: 1, column: 17 })
  })

  it("reports YAML and JSON syntax errors with positions", () => {
    expect(parseSource("a: 1\nb: [\n", "yaml")).toMatchObject({ _tag: "SyntaxError" })
    expect(parseSource(`{\n  "a": 1,\n  "b": tru\n}`, "json")).toEqual({
      _tag: "SyntaxError",
      issues: [{ path: "", message: expect.stringContaining("true"), line: 3, column: 8 }]
    })
    // Duplicate keys are refused in both formats.
    expect(parseSource(`{"a": 1, "a": 2}`, "json")).toMatchObject({ _tag: "SyntaxError", issues: [{ line: 1, column: 10 }] })
  })

  it("refuses duplicate keys where the yaml package's own check does, at the same places", () => {
    const documents = [
      "a: 1\na: 2\n",
      "a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\na: 4\n",
      "x: {k: 1, j: 2, k: 3}\n",
      "- {a: 1, a: 2}\n- [b: 1, b: 2]\n- {c: 1}\n- {c: 1}\n",
      // Keys equal by value, whatever their spelling; a string is not the number it spells.
      "1: a\n0x1: b\n\"1\": c\n",
      "true: a\nTrue: b\n~: c\nnull: d\n",
      "? [a]\n: 1\n? [a]\n: 2\n",
      ".nan: 1\n.NaN: 2\n",
      "&k a: 1\n*k : 2\n",
      `{"a": {"b": 1, "b": 2}, "c": [{"d": 1, "d": 2}], "a": 3}`
    ]
    for (const text of documents) {
      const lines = new LineCounter()
      const expected = parseDocument(text, { uniqueKeys: true, version: "1.2", lineCounter: lines }).errors
        .filter((error) => error.code === "DUPLICATE_KEY")
        .map((error) => ({ line: lines.linePos(error.pos[0]).line, column: lines.linePos(error.pos[0]).col }))
      const result = parseSource(text, text.startsWith("{") ? "json" : "yaml")
      const found = result._tag === "SyntaxError"
        ? result.issues.filter((issue) => issue.message.endsWith("Map keys must be unique"))
          .map(({ column, line }) => ({ line, column }))
        : []
      expect({ text, found }).toEqual({ text, found: expected })
    }
    // Each duplicate is an issue, in the order of the text.
    expect(parseSource(documents[1]!, "yaml")).toMatchObject({ _tag: "SyntaxError", issues: [{ line: 5 }, { line: 6 }] })
  })

  it("keeps JSON values as JSON.parse reads them", () => {
    expect(parsed(`{"n": 1.50, "s": "\\u00e9"}`, "json").value).toEqual({ n: 1.5, s: "é" })
  })
})
