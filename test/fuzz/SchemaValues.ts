/**
 * Valid values for a schema of the OpenAPI document, as fast-check arbitraries. Ids come from
 * the caller's own resources (so handlers find their targets and run deep); a few fields whose
 * meaning the schema cannot express (a config source, a provider URL, a skill text) take values
 * from `hints`, keyed by component or property name.
 */
import fc from "fast-check"
import { idPrefixOf, isIntegerText, type Resolved, type Schema } from "./OpenApiDocument.ts"

export interface ValueContext {
  readonly deref: (schema: Schema) => Resolved
  /** Ids of the given prefix to put where a schema asks for one. */
  readonly ids: (prefix: string) => fc.Arbitrary<string>
  /** Values for fields named by component (`ResourceName`) or property (`source`). */
  readonly hints: Readonly<Record<string, fc.Arbitrary<unknown>>>
}

/** Deeper than this, optional parts of recursive schemas are left out. */
const MAX_DEPTH = 4

/** Small JSON values, for schemas that accept anything. */
const anyJson = fc.jsonValue({ maxDepth: 2 })

const integerIn = (schema: Schema) => {
  const min = typeof schema.minimum === "number" ? schema.minimum : -1_000
  const max = typeof schema.maximum === "number" ? schema.maximum : 1_000_000
  return fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max: Math.min(max, Number.MAX_SAFE_INTEGER) })
}

const stringFor = (resolved: Resolved, context: ValueContext): fc.Arbitrary<string> => {
  const { schema } = resolved
  const prefix = idPrefixOf(schema)
  if (prefix !== undefined) return context.ids(prefix)
  if (isIntegerText(resolved)) return fc.integer({ min: 1, max: 50 }).map(String)
  const minLength = typeof schema.minLength === "number" ? schema.minLength : 0
  const maxLength = typeof schema.maxLength === "number" ? Math.min(schema.maxLength, 40) : 40
  if (typeof schema.pattern === "string") {
    return fc.stringMatching(new RegExp(schema.pattern)).filter((text) => text.length >= minLength && text.length <= maxLength)
  }
  return fc.string({ minLength: Math.max(minLength, 1), maxLength: Math.max(maxLength, minLength, 1) })
}

const objectFor = (schema: Schema, context: ValueContext, depth: number): fc.Arbitrary<Record<string, unknown>> => {
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const required = (schema.required ?? []) as ReadonlyArray<string>
  const names = Object.keys(properties).filter((name) => depth < MAX_DEPTH || required.includes(name))
  const declared = fc.record(
    Object.fromEntries(names.map((name) => [name, valueFor(properties[name], context, depth + 1, name)])),
    { requiredKeys: names.filter((name) => required.includes(name)) }
  )
  // An object schema without properties takes any keys (metadata, provider options): a few of any JSON value.
  const additional = schema.additionalProperties ?? (Object.keys(properties).length === 0 ? {} : undefined)
  if (names.length > 0 || typeof additional !== "object" || additional === null || depth >= MAX_DEPTH) return declared
  const extraValue = valueFor(additional as Schema, context, depth + 1)
  return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), extraValue, { maxKeys: 3 })
}

/** Any value `schema` accepts (`name` is the property it is for, when it is one). */
export const valueFor = (raw: Schema, context: ValueContext, depth = 0, name?: string): fc.Arbitrary<unknown> => {
  const resolved = context.deref(raw)
  const { component, schema } = resolved
  const hint = (component === undefined ? undefined : context.hints[component]) ??
    (name === undefined ? undefined : context.hints[name])
  if (hint !== undefined) return hint
  if (Array.isArray(schema.anyOf)) {
    const branches = (schema.anyOf as ReadonlyArray<Schema>).map((branch) => valueFor(branch, context, depth + 1, name))
    return depth >= MAX_DEPTH ? branches[0] : fc.oneof(...branches)
  }
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum)
  switch (schema.type) {
    case "null":
      return fc.constant(null)
    case "boolean":
      return fc.boolean()
    case "integer":
      return integerIn(schema)
    case "number":
      return fc.oneof(integerIn(schema), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }))
    case "string":
      return stringFor(resolved, context)
    case "array": {
      const minLength = typeof schema.minItems === "number" ? schema.minItems : 0
      const items = valueFor((schema.items ?? {}) as Schema, context, depth + 1)
      return fc.array(items, { minLength, maxLength: depth >= MAX_DEPTH ? minLength : Math.max(minLength, 3) })
    }
    case "object":
      return objectFor(schema, context, depth)
  }
  return anyJson
}
