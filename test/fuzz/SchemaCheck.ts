/**
 * Whether a JSON value conforms to a schema of the OpenAPI document: the keywords the document
 * uses (type, enum, anyOf, properties, required, additionalProperties, items, minItems, maxItems,
 * minLength, maxLength, pattern, minimum, maximum). The fuzz test uses it to know when a mutated
 * body breaks the published contract, and must therefore be refused.
 */
import type { Resolved, Schema } from "./OpenApiDocument.ts"

type Deref = (schema: Schema) => Resolved

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const hasType = (type: unknown, value: unknown): boolean => {
  switch (type) {
    case undefined:
      return true
    case "null":
      return value === null
    case "boolean":
      return typeof value === "boolean"
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "string":
      return typeof value === "string"
    case "array":
      return Array.isArray(value)
    case "object":
      return isObject(value)
  }
  return Array.isArray(type) && type.some((one) => hasType(one, value))
}

const numberAt = (schema: Schema, keyword: string) => typeof schema[keyword] === "number" ? schema[keyword] as number : undefined

export const conforms = (deref: Deref, raw: Schema, value: unknown): boolean => {
  const { schema } = deref(raw)
  if (Array.isArray(schema.anyOf)) {
    if (!(schema.anyOf as ReadonlyArray<Schema>).some((branch) => conforms(deref, branch, value))) return false
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false
  if (!hasType(schema.type, value)) return false
  if (typeof value === "number") {
    const minimum = numberAt(schema, "minimum")
    const maximum = numberAt(schema, "maximum")
    if (minimum !== undefined && value < minimum) return false
    if (maximum !== undefined && value > maximum) return false
  }
  if (typeof value === "string") {
    const minLength = numberAt(schema, "minLength")
    const maxLength = numberAt(schema, "maxLength")
    if (minLength !== undefined && value.length < minLength) return false
    if (maxLength !== undefined && value.length > maxLength) return false
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern).test(value)) return false
  }
  if (Array.isArray(value)) {
    const minItems = numberAt(schema, "minItems")
    const maxItems = numberAt(schema, "maxItems")
    if (minItems !== undefined && value.length < minItems) return false
    if (maxItems !== undefined && value.length > maxItems) return false
    const items = schema.items as Schema | undefined
    if (items !== undefined && !value.every((item) => conforms(deref, items, item))) return false
  }
  if (isObject(value)) {
    const properties = (schema.properties ?? {}) as Record<string, Schema>
    const required = (schema.required ?? []) as ReadonlyArray<string>
    if (!required.every((name) => Object.hasOwn(value, name))) return false
    for (const [name, item] of Object.entries(value)) {
      const declared = Object.hasOwn(properties, name) ? properties[name] : undefined
      if (declared !== undefined) {
        if (!conforms(deref, declared, item)) return false
      } else if (schema.additionalProperties === false) {
        return false
      } else if (isObject(schema.additionalProperties) && !conforms(deref, schema.additionalProperties, item)) {
        return false
      }
    }
  }
  return true
}
