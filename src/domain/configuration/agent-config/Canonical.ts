/**
 * Canonical JSON: object keys sorted by UTF-16 code units (JavaScript's default sort), no
 * insignificant whitespace, strings and numbers written as `JSON.stringify` writes them. The same
 * JSON value always gives the same text, whatever the order or spacing it came in.
 */
import type { JsonValue } from "./Definition.ts"

export const canonicalJson = (value: JsonValue): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value)
  if (Array.isArray(value)) return "[" + value.map(canonicalJson).join(",") + "]"
  const object = value as { readonly [key: string]: JsonValue }
  return "{" +
    Object.keys(object).sort().map((key) => JSON.stringify(key) + ":" + canonicalJson(object[key])).join(",") +
    "}"
}
