/**
 * The Api as served, with an OpenAPI document that describes what is really sent. The document is
 * corrected here, once, for the JSON document and the docs page alike:
 * - the repeated `$id` Effect gives `Schema.Unknown`, which a strict validator refuses, is dropped;
 * - a schema Effect 4 reaches as two schema objects of one identifier (a struct used directly and
 *   through `optional`) is one component, not `<Name>` and a `<Name>_1` copy, and a class reached
 *   through `optional` is a reference to its component, not its body written out;
 * - Effect 4 names the component of a class's wire form `<Name>Encoded` (`OrganizationEncoded`):
 *   it keeps the name it always had (`Organization`) where no other component has it;
 * - the bearer scheme is written `bearer`, as it always was (Effect 4 writes `Bearer`).
 */
import { OpenApi } from "effect/http-api"
import { Api } from "../../api/Api.ts"

type Json = Record<string, any>

/**
 * Effect writes `Schema.Unknown` (a metadata value, a tool's input) as `{ "$id": "/schemas/unknown" }` at
 * every use, and a JSON Schema `$id` must be unique in a document. Such a schema means "any JSON value":
 * written as `{}`, the same in every place.
 */
const withoutBuiltinIds = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutBuiltinIds)
  if (value === null || typeof value !== "object") return value
  const entries = Object.entries(value as Json)
  const id = (value as Json).$id
  if (typeof id === "string" && id.startsWith("/schemas/")) {
    return Object.fromEntries(
      entries.filter(([key]) => key !== "$id" && key !== "title").map(([key, inner]) => [key, withoutBuiltinIds(inner)])
    )
  }
  return Object.fromEntries(entries.map(([key, inner]) => [key, withoutBuiltinIds(inner)]))
}

const REF_PREFIX = "#/components/schemas/"

/**
 * The document with components renamed: every reference to a renamed component follows it; a
 * component renamed to a name another component has is merged into that one (it is dropped).
 */
const withComponentsRenamed = (spec: Json, renamed: ReadonlyMap<string, string>): Json => {
  if (renamed.size === 0) return spec
  const schemas = (spec.components?.schemas ?? {}) as Json
  const rename = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rename)
    if (value === null || typeof value !== "object") return value
    return Object.fromEntries(Object.entries(value as Json).map(([key, inner]) => {
      if (key === "$ref" && typeof inner === "string" && inner.startsWith(REF_PREFIX)) {
        const target = inner.slice(REF_PREFIX.length)
        return [key, REF_PREFIX + (renamed.get(target) ?? target)]
      }
      return [key, rename(inner)]
    }))
  }
  const renamedSpec = rename(spec) as Json
  renamedSpec.components.schemas = Object.fromEntries(
    Object.entries(renamedSpec.components.schemas as Json)
      .filter(([name]) => {
        const target = renamed.get(name)
        return target === undefined || !(target in schemas)
      })
      .map(([name, schema]) => [renamed.get(name) ?? name, schema])
  )
  return renamedSpec
}

/** A schema as JSON with its keys sorted, each reference to a component read through `nameOf`. */
const normalised = (value: unknown, nameOf: (name: string) => string = (name) => name): string => {
  if (Array.isArray(value)) return `[${value.map((inner) => normalised(inner, nameOf)).join(",")}]`
  if (value === null || typeof value !== "object") return JSON.stringify(value)
  const entries = Object.entries(value as Json).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${
    entries.map(([key, inner]) =>
      `${JSON.stringify(key)}:${
        key === "$ref" && typeof inner === "string" && inner.startsWith(REF_PREFIX)
          ? JSON.stringify(REF_PREFIX + nameOf(inner.slice(REF_PREFIX.length)))
          : normalised(inner, nameOf)
      }`
    ).join(",")
  }}`
}

const COPY = /^(.+)_\d+$/

/**
 * Effect 4 makes one component per schema object and identifier, and calls a second schema object
 * with an identifier already taken `<Name>_1`. `optional(S)` (src/domain/shared/Optional.ts) writes
 * its JSON with `Schema.toEncoded(S)`, which for a struct with transformed fields (an `optional`
 * field is one) is a new struct carrying S's identifier: a struct used both directly and through
 * `optional` (ContentBlock, AgentInputEvent, CompiledAgentModel …) came out twice, as `<Name>` and an
 * identical `<Name>_1`, which client generators turn into two types. A `<Name>_<n>` is merged into
 * `<Name>` when their JSON Schemas are equal once references to merged copies are read as references
 * to their originals (copies that refer to copies, and recursive ones, included); one that differs
 * stays as it is, so a second wire shape under one identifier is never hidden.
 */
const withoutCopies = (spec: Json): Json => {
  const schemas = (spec.components?.schemas ?? {}) as Json
  const merged = new Map<string, string>()
  for (const name of Object.keys(schemas)) {
    const original = COPY.exec(name)?.[1]
    if (original !== undefined && original in schemas) merged.set(name, original)
  }
  const originalOf = (name: string): string => {
    const original = merged.get(name)
    return original === undefined ? name : originalOf(original)
  }
  // Every copy is taken for its original until shown to differ; dropping one may show another to differ.
  let dropped = true
  while (dropped) {
    dropped = false
    for (const [copy, original] of merged) {
      if (normalised(schemas[copy], originalOf) !== normalised(schemas[original], originalOf)) {
        merged.delete(copy)
        dropped = true
      }
    }
  }
  return withComponentsRenamed(spec, new Map([...merged.keys()].map((copy) => [copy, originalOf(copy)])))
}

const ENCODED = /Encoded$/

/**
 * The same mechanism for a `Schema.Class` (or any schema whose identifier is on its decoded side):
 * its wire form is the component `<Name>Encoded`, but `Schema.toEncoded` of it is the bare struct,
 * without the class's identifier, so `optional(Class)` wrote the class's whole body inline
 * (LaunchedAgent's `input`, an InputAccepted). An inline object schema equal to such a component is
 * a reference to it. Only objects: a string or number is not told apart from another by its shape.
 */
const withClassReferences = (spec: Json): Json => {
  const schemas = (spec.components?.schemas ?? {}) as Json
  const classes = new Map<string, string>()
  for (const [name, schema] of Object.entries(schemas)) {
    if (ENCODED.test(name) && schema?.type === "object") {
      const body = normalised(schema)
      if (!classes.has(body)) classes.set(body, name)
    }
  }
  if (classes.size === 0) return spec
  const referenced = (value: unknown, isComponent = false): unknown => {
    if (Array.isArray(value)) return value.map((inner) => referenced(inner))
    if (value === null || typeof value !== "object") return value
    if (!isComponent && (value as Json).type === "object") {
      const name = classes.get(normalised(value))
      if (name !== undefined) return { $ref: REF_PREFIX + name }
    }
    return Object.fromEntries(Object.entries(value as Json).map(([key, inner]) => [key, referenced(inner)]))
  }
  return {
    ...referenced({ ...spec, components: undefined }) as Json,
    components: {
      ...spec.components,
      schemas: Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, referenced(schema, true)]))
    }
  }
}

/** `<Name>Encoded` components as `<Name>`, where that name is free, and every reference to them. */
const withClassNames = (spec: Json): Json => {
  const schemas = (spec.components?.schemas ?? {}) as Json
  const renamed = new Map<string, string>()
  for (const name of Object.keys(schemas)) {
    const plain = name.replace(ENCODED, "")
    if (plain !== name && !(plain in schemas)) renamed.set(name, plain)
  }
  return withComponentsRenamed(spec, renamed)
}

/** HTTP authentication scheme names are case-insensitive; the document has always said `bearer`. */
const withBearerScheme = (spec: Json): Json => {
  for (const scheme of Object.values((spec.components?.securitySchemes ?? {}) as Json)) {
    if (scheme.type === "http" && typeof scheme.scheme === "string") scheme.scheme = scheme.scheme.toLowerCase()
  }
  return spec
}

const describeWireErrors = (spec: Json): Json =>
  withBearerScheme(withClassNames(withClassReferences(withoutCopies(withoutBuiltinIds(spec) as Json))))

export const ServedApi = Api.annotate(OpenApi.Transform, describeWireErrors)
