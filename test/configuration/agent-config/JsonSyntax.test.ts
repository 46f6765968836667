import { describe, expect, it } from "@effect/vitest"
import { findJsonSyntaxError } from "../../../src/domain/configuration/agent-config/JsonSyntax.ts"

describe("findJsonSyntaxError", () => {
  it("accepts what JSON.parse accepts", () => {
    for (const text of [`{}`, `[]`, ` {"a": [1, -2.5e3, true, false, null, "\\u00e9\\n"]} `, `"x"`, `0`]) {
      expect(() => JSON.parse(text)).not.toThrow()
      expect(findJsonSyntaxError(text)).toBeUndefined()
    }
  })

  it("gives the offset of the first offending character", () => {
    expect(findJsonSyntaxError(`{"a": 1,}`)).toMatchObject({ offset: 8 })
    expect(findJsonSyntaxError(`{"a": 01}`)).toMatchObject({ offset: 7 })
    expect(findJsonSyntaxError(`{'a': 1}`)).toMatchObject({ offset: 1 })
    expect(findJsonSyntaxError(`[1, 2`)).toMatchObject({ offset: 5 })
    expect(findJsonSyntaxError(`{"a": "x\\q"}`)).toMatchObject({ offset: 9 })
    expect(findJsonSyntaxError(`{"a": 1} x`)).toMatchObject({ offset: 9 })
    expect(findJsonSyntaxError(`{"a": 1 // no comments\n}`)).toMatchObject({ offset: 8 })
  })
})
