import { describe, expect, it } from "@effect/vitest"
import { parseSource } from "../../../src/domain/configuration/agent-config/Source.ts"
import { validateDefinition } from "../../../src/domain/configuration/agent-config/Validate.ts"

const validate = (yaml: string) => {
  const result = parseSource(yaml, "yaml")
  if (result._tag !== "Parsed") throw new Error("syntax")
  return validateDefinition(result.source)
}

const MODEL = "model: { provider_config: P, name: M }\n"

describe("validateDefinition", () => {
  it("accepts a minimal definition", () => {
    expect(validate("instruction: Hi\n" + MODEL)).toMatchObject({
      _tag: "Valid",
      definition: { instruction: "Hi", model: { provider_config: "P", name: "M" } }
    })
  })

  it("reports one issue per problem, in document order, without the noise of optional fields", () => {
    const result = validate(
      "instruction: \" \"\n" + MODEL + "tools:\n  t:\n    permission: maybe\n    input_schema: { x: .inf }\nextra: 1\n"
    )
    expect(result).toEqual({
      _tag: "Invalid",
      issues: [
        { path: "/instruction", message: "must contain a non-whitespace character", line: 1, column: 14 },
        { path: "/tools/t/permission", message: `Expected "allow" | "ask", got a string`, line: 5, column: 17 },
        { path: "/tools/t/input_schema/x", message: "must be a finite number", line: 6, column: 24 },
        { path: "/extra", message: expect.stringContaining("is not allowed here"), line: 7, column: 1 }
      ]
    })
  })

  it("refuses a document that is not an object", () => {
    expect(validate("- a\n- b\n")).toEqual({
      _tag: "Invalid",
      issues: [{ path: "", message: expect.stringContaining("object"), line: 1, column: 1 }]
    })
  })
})
