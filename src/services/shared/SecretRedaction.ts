/**
 * Secret values out of outside text (docs/secrets.md, "Redaction"): before what a provider (or
 * later a machine) answers is recorded, stored, logged or returned, every occurrence of a secret
 * value the call used becomes `[redacted secret sec_…]`. The value is matched as sent and in the
 * forms an echo commonly takes (JSON-escaped, URL-encoded).
 */
import { Redacted } from "effect"
import type { SecretId } from "../../domain/shared/Ids.ts"

/** A secret value a call used, and the secret it came from (undefined when it came from none). */
export interface UsedSecret {
  readonly id: SecretId | undefined
  readonly value: Redacted.Redacted<string>
}

const redactionMarker = (id: SecretId | undefined) => id === undefined ? "[redacted secret]" : `[redacted secret ${id}]`

/** The value as sent, JSON-escaped and URL-encoded (without repeats). */
const formsOf = (value: string): ReadonlyArray<string> =>
  [...new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])]

/** A function replacing every occurrence of the secrets' values in a text; an empty value is left alone. */
export const secretRedactor = (secrets: ReadonlyArray<UsedSecret>): (text: string) => string => {
  const replacements = secrets
    .flatMap((secret) => {
      const value = Redacted.value(secret.value)
      return value === "" ? [] : formsOf(value).map((form) => ({ form, marker: redactionMarker(secret.id) }))
    })
    // The longest first, so a value that contains another is replaced whole.
    .sort((a, b) => b.form.length - a.form.length)
  if (replacements.length === 0) return (text) => text
  return (text) => replacements.reduce((result, { form, marker }) => result.split(form).join(marker), text)
}

/**
 * `value` (decoded JSON) with `redact` applied to every string in it. Property names are left
 * alone: they are the protocol's, and a value matched across the JSON text's structure (a secret
 * that is a field's name, or holds a quote) would change the shape instead of hiding a value.
 */
export const redactStrings = (value: unknown, redact: (text: string) => string): unknown =>
  typeof value === "string"
    ? redact(value)
    : Array.isArray(value)
    ? value.map((item) => redactStrings(item, redact))
    : value !== null && typeof value === "object"
    ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactStrings(item, redact)]))
    : value
