import { describe, expect, it } from "@effect/vitest"
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

  it("keeps JSON values as JSON.parse reads them", () => {
    expect(parsed(`{"n": 1.50, "s": "\\u00e9"}`, "json").value).toEqual({ n: 1.5, s: "é" })
  })
})
