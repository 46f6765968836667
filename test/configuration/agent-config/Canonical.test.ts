import { describe, expect, it } from "@effect/vitest"
import { canonicalJson } from "../../../src/domain/configuration/agent-config/Canonical.ts"

describe("canonicalJson", () => {
  it("sorts keys at every depth and drops whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: true }], c: "x" } })).toBe(
      `{"a":{"c":"x","d":[3,{"y":true,"z":null}]},"b":1}`
    )
  })

  it("gives one text for any key order", () => {
    expect(canonicalJson(JSON.parse(`{ "x": 1, "y": [1, 2] }`))).toBe(canonicalJson(JSON.parse(`{"y":[1,2],"x":1}`)))
  })

  it("escapes strings as JSON does and keeps a __proto__ key as data", () => {
    expect(canonicalJson({ "q\"\n": "é\u0000" })).toBe(`{"q\\"\\n":"é\\u0000"}`)
    expect(canonicalJson(JSON.parse(`{"__proto__":{"a":1}}`))).toBe(`{"__proto__":{"a":1}}`)
  })
})
