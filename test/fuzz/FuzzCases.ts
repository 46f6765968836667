/**
 * The requests the fuzz test sends to one operation, by category. Each case is a raw request
 * plus the facts the properties need: who sends it, whether it names organization A's resources,
 * whether its body breaks the schema, which parameter holds a malformed integer, and so on.
 */
import fc from "fast-check"
import { type BodyCase, type BodyCases, bodyCases } from "./BodyCases.ts"
import type { CallerName, FuzzWorld } from "./FuzzTenants.ts"
import {
  type ContentTypes,
  garbageSegment,
  idOfNothing,
  JSON_CONTENT_TYPES,
  MALFORMED_INTEGERS,
  NOT_JSON_CONTENT_TYPES,
  ODD_CONTENT_TYPES,
  ODD_QUERIES,
  UNKNOWN_PARAMETERS
} from "./HostileValues.ts"
import type { RawRequest } from "./HttpExchange.ts"
import { type ApiDocument, idPrefixOf, isIntegerText, type Operation, type Parameter } from "./OpenApiDocument.ts"
import { valueFor, type ValueContext } from "./SchemaValues.ts"
import { fuzzHints } from "./FuzzHints.ts"

export type Category =
  | "valid requests"
  | "path ids"
  | "another tenant"
  | "queries"
  | "malformed bodies"
  | "odd strings"
  | "deep nesting"
  | "content types"

export interface FuzzCase {
  readonly caller: CallerName
  readonly request: Omit<RawRequest, "token">
  /** A path parameter holds an id of organization A's. */
  readonly namesTenantA: boolean
  /** The project of organization A the path names, if any. */
  readonly projectOfA: boolean
  readonly body: BodyCase | undefined
  /** The query, header or path parameter that holds a malformed integer. */
  readonly malformedInteger: string | undefined
  /** The query holds a cursor the server never made (never answered 2xx). */
  readonly unknownCursor: boolean
  /** The body was sent with a content type that is plainly not JSON (or none). */
  readonly notJson: boolean
  /** What this case is, for the report. */
  readonly summary: string
}

type Source = "own" | "tenantA" | "nothing" | "garbage"

const ALL_CALLERS: ReadonlyArray<CallerName> = ["owner", "member", "otherTenantKey", "otherTenantOwner"]
const OTHER_TENANT: ReadonlyArray<CallerName> = ["otherTenantKey", "otherTenantOwner"]

interface Segment {
  readonly name: string
  readonly text: string
  readonly source: Source
  readonly malformedInteger: boolean
}

/** A segment whose id is taken from a bundle once the bundle is chosen (`key`), or already made. */
type PendingSegment = Omit<Segment, "text"> & { readonly text?: string; readonly key?: string }

const pendingSegment = (document: ApiDocument, parameter: Parameter, source: Source): fc.Arbitrary<PendingSegment> => {
  const resolved = document.deref(parameter.schema)
  const prefix = idPrefixOf(resolved.schema) ?? "x"
  const integer = isIntegerText(resolved)
  const base = { name: parameter.name, source, malformedInteger: false }
  switch (source) {
    case "own":
    case "tenantA":
      return fc.constant({ ...base, key: integer ? "version" : prefix })
    case "nothing":
      return (integer ? fc.constant("999999") : idOfNothing(prefix)).map((text) => ({ ...base, text }))
    case "garbage":
      return integer
        ? fc.constantFrom(...MALFORMED_INTEGERS.filter((text) => text !== "")).map((text) => ({
          ...base,
          text: encodeURIComponent(text),
          malformedInteger: true
        }))
        : garbageSegment(prefix).map((text) => ({ ...base, text }))
  }
}

/** The segment's id from the caller's own bundle or organization A's (an id of nothing when the bundle has none). */
const settle = (pending: PendingSegment, own: Readonly<Record<string, string>>, tenantA: Readonly<Record<string, string>>): Segment => {
  if (pending.text !== undefined) return { ...pending, text: pending.text }
  const key = pending.key!
  const bundle = pending.source === "tenantA" ? tenantA : own
  return { ...pending, text: bundle[key] ?? (key === "version" ? "999" : `${key}_${"a".repeat(26)}`) }
}

/** The segment holds an id of organization A's (a version number belongs to no one). */
const namesTenantA = (segment: Segment) => segment.source === "tenantA" && segment.text.includes("_")

const buildPath = (operation: Operation, segments: ReadonlyArray<Segment>) =>
  segments.reduce((path, segment) => path.replace(`{${segment.name}}`, segment.text), operation.path)

const integerParameters = (document: ApiDocument, parameters: ReadonlyArray<Parameter>) =>
  parameters.filter((parameter) => isIntegerText(document.deref(parameter.schema)))

/** Valid query parameters (some of them): small decimal integers, enum values; never a cursor. */
const validQuery = (world: FuzzWorld, document: ApiDocument, caller: CallerName, operation: Operation) =>
  fc.tuple(...operation.queryParameters.map((parameter) => {
    const resolved = document.deref(parameter.schema)
    const value = isIntegerText(resolved)
      ? fc.integer({ min: 1, max: 50 }).map(String)
      : parameter.name === "cursor"
      ? fc.constant(undefined)
      : valueFor(parameter.schema, contextFor(world, document, caller)).map(String)
    return fc.option(value.map((text) => [parameter.name, text] as const), { nil: undefined })
  })).map((pairs) => pairs.filter((pair): pair is readonly [string, string] => pair !== undefined && pair[1] !== undefined))

const queryText = (pairs: ReadonlyArray<readonly [string, string]>, raw: ReadonlyArray<string> = []) => {
  const parts = [...pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`), ...raw]
  return parts.length === 0 ? "" : `?${parts.join("&")}`
}

const contextFor = (world: FuzzWorld, document: ApiDocument, caller: CallerName): ValueContext => {
  const pools = world.callers[caller].tenant.pools
  return {
    deref: document.deref,
    ids: (prefix: string) => (pools[prefix]?.length ?? 0) > 0 ? fc.constantFrom(...pools[prefix]) : idOfNothing(prefix),
    hints: fuzzHints(world)
  }
}

interface Parts {
  readonly caller: CallerName
  readonly segments: ReadonlyArray<Segment>
  readonly query?: string
  readonly malformedInteger?: string
  readonly unknownCursor?: boolean
  readonly body?: BodyCase
  readonly contentType?: ContentTypes
  readonly notJson?: boolean
  readonly chunked?: boolean
  readonly headers?: Readonly<Record<string, string>>
  readonly summary: string
}

const toCase = (world: FuzzWorld, operation: Operation, parts: Parts): FuzzCase => {
  const pathMalformed = parts.segments.find((segment) => segment.malformedInteger)?.name
  const bodyGoes = parts.body !== undefined
  const contentType = "contentType" in parts ? parts.contentType : bodyGoes ? "application/json" : undefined
  return {
    caller: parts.caller,
    request: {
      method: operation.method,
      target: buildPath(operation, parts.segments) + (parts.query ?? ""),
      ...(contentType === undefined ? {} : { contentType }),
      ...(bodyGoes ? { body: parts.body!.text } : {}),
      ...(parts.body?.recipe === undefined ? {} : { bodyRecipe: parts.body.recipe }),
      ...(parts.chunked === true ? { chunked: true } : {}),
      ...(parts.headers === undefined ? {} : { headers: parts.headers })
    },
    namesTenantA: OTHER_TENANT.includes(parts.caller) && parts.segments.some(namesTenantA),
    projectOfA: parts.segments.some((segment) =>
      segment.name === "projectID" && world.tenantA.pools.proj.includes(segment.text) && segment.source !== "nothing"
    ),
    body: parts.body,
    malformedInteger: parts.malformedInteger ?? pathMalformed,
    unknownCursor: parts.unknownCursor ?? false,
    notJson: parts.notJson ?? false,
    summary: [parts.summary, ...parts.segments.filter((segment) => segment.source !== "own").map((segment) => `${segment.name}: ${segment.source}`)]
      .join("; ")
  }
}

/** The categories of requests that apply to `operation`. */
export const categoriesOf = (operation: Operation): ReadonlyArray<Category> => [
  "valid requests",
  "path ids",
  ...(operation.pathParameters.length > 0 ? ["another tenant" as const] : []),
  ...(operation.queryParameters.length > 0 || operation.headerParameters.length > 0 ? ["queries" as const] : []),
  ...(operation.body === undefined
    ? []
    : ["malformed bodies" as const, "odd strings" as const, "deep nesting" as const, "content types" as const])
]

/** The requests of one category for `operation`. */
export const casesFor = (world: FuzzWorld, document: ApiDocument, operation: Operation, category: Category): fc.Arbitrary<FuzzCase> => {
  const contexts = Object.fromEntries(ALL_CALLERS.map((caller) => [caller, contextFor(world, document, caller)]))
  const bodiesOf = Object.fromEntries(ALL_CALLERS.map((caller) => [
    caller,
    operation.body === undefined ? undefined : bodyCases(operation.body, contexts[caller])
  ]))
  /** Path segments, each parameter's from one of `sources` (repeat a source to weigh it). */
  const pathFrom = (caller: CallerName, sources: ReadonlyArray<Source>) =>
    fc.tuple(
      fc.constantFrom(...world.callers[caller].tenant.bundles),
      fc.constantFrom(...world.tenantA.bundles),
      fc.tuple(...operation.pathParameters.map((parameter) =>
        fc.oneof(...sources.map((source) => pendingSegment(document, parameter, source)))
      ))
    ).map(([own, tenantA, pending]) => pending.map((segment) => settle(segment, own, tenantA)))
  const ownPath = (caller: CallerName) => pathFrom(caller, ["own"])
  const bodies = (caller: CallerName) => bodiesOf[caller]!
  const make = (parts: (caller: CallerName) => fc.Arbitrary<Parts>, callers = ALL_CALLERS) =>
    fc.oneof(...callers.map(parts)).map((built) => toCase(world, operation, built))
  const validBody = (caller: CallerName) => bodiesOf[caller]?.valid ?? fc.constant(undefined)
  const withBody = (body: BodyCase | undefined) => body === undefined ? {} : { body }
  const bodyCategory = (pick: (cases: BodyCases) => fc.Arbitrary<BodyCase>, summary: string) =>
    make((caller) =>
      fc.record({ segments: ownPath(caller), body: pick(bodies(caller)) }).map(({ body, segments }) => ({
        caller,
        segments,
        body,
        summary: `${summary}: ${body.summary}`
      }))
    )

  switch (category) {
    case "valid requests":
      return make((caller) =>
        fc.record({ segments: ownPath(caller), query: validQuery(world, document, caller, operation), body: validBody(caller) })
          .map(({ body, query, segments }) => ({ caller, segments, query: queryText(query), ...withBody(body), summary: "a valid request" }))
      )
    case "path ids":
      return make((caller) =>
        fc.record({ segments: pathFrom(caller, ["own", "tenantA", "nothing", "garbage"]), body: validBody(caller) })
          .map(({ body, segments }) => ({ caller, segments, ...withBody(body), summary: "path ids" }))
      )
    case "another tenant":
      return make((caller) =>
        fc.record({
          segments: pathFrom(caller, ["tenantA", "tenantA", "own", "nothing"]).filter((segments) => segments.some(namesTenantA)),
          body: operation.body === undefined ? fc.constant(undefined) : fc.oneof(validBody(caller), bodies(caller).malformed)
        }).map(({ body, segments }) => ({ caller, segments, ...withBody(body), summary: "another tenant's request" })), OTHER_TENANT)
    case "queries":
      return make((caller) =>
        fc.record({ segments: ownPath(caller), valid: validQuery(world, document, caller, operation) })
          .chain(({ segments, valid }) => fc.oneof(...queryVariants(document, operation, caller, segments, valid)))
      )
    case "malformed bodies":
      return bodyCategory((cases) => cases.malformed, "a malformed body")
    case "odd strings":
      return bodyCategory((cases) => cases.oddStrings, "an odd string")
    case "deep nesting":
      return bodyCategory((cases) => cases.deepNesting, "deep nesting")
    case "content types":
      return make((caller) =>
        fc.record({
          segments: ownPath(caller),
          body: bodies(caller).valid,
          contentType: fc.constantFrom<ContentTypes>(...JSON_CONTENT_TYPES, ...NOT_JSON_CONTENT_TYPES, ...ODD_CONTENT_TYPES),
          chunked: fc.boolean()
        }).map(({ body, chunked, contentType, segments }) => ({
          caller,
          segments,
          body,
          contentType,
          notJson: NOT_JSON_CONTENT_TYPES.includes(contentType),
          chunked,
          summary: `content type ${JSON.stringify(contentType)}${chunked ? ", chunked" : ""}`
        }))
      )
  }
}

/** Hostile queries: unknown parameters, odd encodings, repeats, malformed integers, unknown cursors, odd headers. */
const queryVariants = (
  document: ApiDocument,
  operation: Operation,
  caller: CallerName,
  segments: ReadonlyArray<Segment>,
  valid: ReadonlyArray<readonly [string, string]>
): Array<fc.Arbitrary<Parts>> => {
  const variants: Array<fc.Arbitrary<Parts>> = [
    fc.tuple(fc.constantFrom(...UNKNOWN_PARAMETERS), fc.constantFrom("1", "x", "")).map(([name, value]) => ({
      caller,
      segments,
      query: queryText([...valid, [name, value]]),
      summary: `the unknown parameter ${name}`
    })),
    fc.constantFrom(...ODD_QUERIES).map((raw) => ({ caller, segments, query: queryText(valid, [raw]), summary: `the query text ${raw}` }))
  ]
  if (valid.length > 0) {
    variants.push(fc.constant({ caller, segments, query: queryText([...valid, ...valid]), summary: "every parameter twice" }))
  }
  const integers = integerParameters(document, operation.queryParameters)
  if (integers.length > 0) {
    variants.push(fc.tuple(fc.constantFrom(...integers), fc.constantFrom(...MALFORMED_INTEGERS)).map(([parameter, value]) => ({
      caller,
      segments,
      query: queryText([...valid.filter(([name]) => name !== parameter.name), [parameter.name, value]]),
      malformedInteger: parameter.name,
      summary: `${parameter.name}=${JSON.stringify(value)}`
    })))
  }
  if (operation.queryParameters.some((parameter) => parameter.name === "cursor")) {
    variants.push(fc.constantFrom("abc", "eyJ4IjoxfQ", "", "%00").map((cursor) => ({
      caller,
      segments,
      query: queryText(valid, [`cursor=${cursor}`]),
      unknownCursor: cursor !== "",
      summary: `the cursor ${JSON.stringify(cursor)}`
    })))
  }
  for (const header of operation.headerParameters) {
    variants.push(fc.constantFrom(...MALFORMED_INTEGERS.filter((text) => /^[\x20-\x7e]*$/.test(text))).map((value) => ({
      caller,
      segments,
      headers: { [header.name]: value },
      summary: `the header ${header.name}: ${JSON.stringify(value)}`
    })))
  }
  return variants
}
