/**
 * Redacting the secrets a command could read from its result (SecretRedaction.ts): every string
 * value, as sent and JSON-escaped; never a property name, so a secret that is a field's name, or
 * holds a quote, hides values and leaves the result's shape as it was.
 */
import { Redacted } from "effect"
import { describe, expect, it } from "vitest"
import type { SecretId } from "../../src/domain/shared/Ids.ts"
import { redactStrings, secretRedactor } from "../../src/services/shared/SecretRedaction.ts"

const secret = (id: string, value: string) => ({ id: id as SecretId, value: Redacted.make(value) })

describe("redacting a decoded result", () => {
  it("replaces the values in every string, nested ones too, and leaves the property names alone", () => {
    const redact = secretRedactor([secret("sec_a", "stdout"), secret("sec_b", `say "hi"`)])
    const outcome = { outcome: "succeeded", output: { exit_code: 0, stdout: "stdout: say \"hi\"\n", lines: ["stdout"] } }
    expect(redactStrings(outcome, redact)).toEqual({
      outcome: "succeeded",
      output: {
        exit_code: 0,
        stdout: "[redacted secret sec_a]: [redacted secret sec_b]\n",
        lines: ["[redacted secret sec_a]"]
      }
    })
  })

  it("leaves numbers, booleans and null as they are", () => {
    const redact = secretRedactor([secret("sec_a", "0")])
    expect(redactStrings({ code: 0, ok: true, none: null, text: "0" }, redact)).toEqual({
      code: 0,
      ok: true,
      none: null,
      text: "[redacted secret sec_a]"
    })
  })
})
