/**
 * The Api as served, with an OpenAPI document that describes what is really sent.
 *
 * Every HttpApi starts with HttpApiDecodeError as a possible error, so @effect/platform lists
 * its body (`{_tag, issues, message}`) as a 400 answer of every operation, and its `Issue` (with
 * array paths) takes the name of ours. Neither is ever sent: the guards answer every decode
 * failure with `invalid_request` and issues of `{path, message, line?, column?}`. The document is
 * corrected here, once, for the JSON document and the docs page alike; the same pass drops the
 * repeated `$id` Effect gives `Schema.Unknown`, which a strict validator refuses.
 */
import { OpenApi } from "@effect/platform"
import { JSONSchema } from "effect"
import { Api } from "../../api/Api.ts"
import { Issue } from "../../domain/shared/Errors.ts"

const DECODE_ERROR = "HttpApiDecodeError"
const DECODE_ERROR_REF = `#/components/schemas/${DECODE_ERROR}`

type Json = Record<string, any>

/** Leaves HttpApiDecodeError out of an `anyOf` of error bodies. */
const withoutDecodeError = (schema: Json | undefined): Json | undefined => {
  if (schema?.anyOf === undefined) return schema
  const members = (schema.anyOf as Array<Json>).filter((member) => member.$ref !== DECODE_ERROR_REF)
  return members.length === 1 ? members[0] : { ...schema, anyOf: members }
}

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

const describeWireErrors = (spec: Json): Json => {
  for (const operations of Object.values(spec.paths as Record<string, Json>)) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values((operation.responses ?? {}) as Record<string, Json>)) {
        const json = response.content?.["application/json"]
        if (json !== undefined) json.schema = withoutDecodeError(json.schema)
      }
    }
  }
  const schemas = spec.components.schemas as Json
  delete schemas[DECODE_ERROR]
  // Ours, written into the document's own components (with what it refers to, such as Int).
  delete schemas.Issue
  JSONSchema.fromAST(Issue.ast, { definitions: schemas, definitionPath: "#/components/schemas/", target: "openApi3.1" })
  if (!JSON.stringify(spec).includes("#/components/schemas/PropertyKey")) delete schemas.PropertyKey
  return withoutBuiltinIds(spec) as Json
}

export const ServedApi = Api.annotate(OpenApi.Transform, describeWireErrors)
