/**
 * What the guards need to know of each endpoint, derived from the Api itself (nothing listed
 * twice): whether it takes a body, its limit and where it carries content blocks, the query parameters it
 * declares, whether it authenticates, and its schemas with the parse options it is decoded with.
 * Matched with the router effect/http's HttpRouter uses (its FindMyWay), so a request finds the
 * same endpoint here as in the Api's router.
 */
import { HttpApi, type HttpApiEndpoint, type HttpApiGroup, HttpApiMiddleware } from "effect/http-api"
import { FindMyWay, HttpMethod } from "effect/http"
import { Context, Schema, SchemaAST as AST } from "effect"
import { SubmittedContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import { base64Length, FILE_TRANSFER_MAX_BYTES } from "../../domain/machines/MachineFiles.ts"
import { WriteFileBody } from "../../domain/machines/Machines.ts"
import { MAX_MEDIA_REQUEST_BODY_BYTES } from "../../domain/runtime/Limits.ts"
import type { BodyRules } from "./JsonBody.ts"

/** Request bodies larger than this are refused with 413 `request_too_large`, unless their route allows more. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024

/** A whole file written to a machine: its largest content in base64, and room for the rest of the body. */
const FILE_WRITE_BODY_LIMIT_BYTES = base64Length(FILE_TRANSFER_MAX_BYTES) + 64 * 1024

/** The schemas of an endpoint's request parts, each with the parse options HttpApiBuilder decodes it with. */
export interface RequestSchemas {
  readonly method: string
  readonly params: Schema.Top | undefined
  readonly headers: Schema.Top | undefined
  readonly query: Schema.Top | undefined
  /** The JSON body (or, on a method without a body, the query it is read from). */
  readonly payload: Schema.Top | undefined
  readonly options: {
    readonly params: AST.ParseOptions | undefined
    readonly headers: AST.ParseOptions | undefined
    readonly query: AST.ParseOptions | undefined
    readonly payload: AST.ParseOptions | undefined
  }
}

export interface Endpoint extends BodyRules {
  readonly schemas: RequestSchemas
  /** Whether it reads a body (a JSON payload on a method with a body); a body sent to one that does not is ignored. */
  readonly takesBody: boolean
  /** Query parameters the endpoint declares. */
  readonly queryNames: ReadonlyArray<string>
  /** Header parameters the endpoint declares, lower case. */
  readonly headerNames: ReadonlyArray<string>
  /** Whether a security middleware guards it. */
  readonly authenticated: boolean
}

export interface RouteMatch {
  readonly endpoint: Endpoint
  readonly params: Readonly<Record<string, string | undefined>>
  readonly searchParams: Readonly<Record<string, string | ReadonlyArray<string>>>
}

/**
 * Whether `ast` is `schema`'s: the payload schemas HttpApiBuilder keeps are JSON codecs of the
 * endpoint's (`Schema.toCodecJson`, which answers the same node for the same schema), where a
 * schema that needed one is a new node with the same identifier.
 */
const isSchema = (ast: AST.AST, schema: Schema.Top): boolean => {
  const identifier = schema.ast.annotations?.identifier
  return ast === schema.ast || ast === Schema.toCodecJson(schema).ast ||
    (identifier !== undefined && ast.annotations?.identifier === identifier)
}

/** The property paths (from the root of `root`) of arrays whose elements are `element`. */
const arraysOf = (root: AST.AST, element: Schema.Top): Array<Array<string>> => {
  const found: Array<Array<string>> = []
  const expanded = new Set<AST.AST>()
  const pending: Array<readonly [AST.AST, Array<string>]> = [[root, []]]
  while (pending.length > 0) {
    const [ast, path] = pending.pop()!
    switch (ast._tag) {
      case "Objects":
        for (const property of ast.propertySignatures) pending.push([property.type, [...path, String(property.name)]])
        break
      case "Arrays":
        if (ast.rest.some((rest) => isSchema(rest, element))) found.push(path)
        break
      case "Union":
        for (const member of ast.types) pending.push([member, path])
        break
      case "Declaration":
        // A class: what arrives is its encoded side.
        if (ast.encoding !== undefined) pending.push([AST.toEncoded(ast), path])
        break
      case "Suspend":
        if (!expanded.has(ast)) {
          expanded.add(ast)
          pending.push([ast.thunk(), path])
        }
    }
  }
  return found
}

/** The names of an object schema's properties as they arrive (its encoded side). */
const propertyNames = (schema: Schema.Top): Array<string> => {
  const ast = AST.toEncoded(schema.ast)
  return ast._tag === "Objects" ? ast.propertySignatures.map((property) => String(property.name)) : []
}

/** The parse options of each part: the part's own, else the general ones (as HttpApiBuilder reads them). */
const parseOptionsOf = (annotations: Context.Context<never>): RequestSchemas["options"] => {
  const fallback = Context.getOrUndefined(annotations, HttpApi.ParseOptions)
  return {
    params: Context.getOrUndefined(annotations, HttpApi.ParamsParseOptions) ?? fallback,
    headers: Context.getOrUndefined(annotations, HttpApi.HeadersParseOptions) ?? fallback,
    query: Context.getOrUndefined(annotations, HttpApi.QueryParseOptions) ?? fallback,
    payload: Context.getOrUndefined(annotations, HttpApi.PayloadParseOptions) ?? fallback
  }
}

/** The schemas of the body: those of its JSON content type (or the query's, on a method without a body). */
const payloadOf = (endpoint: HttpApiEndpoint.Top): Schema.Top | undefined => {
  const content = endpoint.payload.get(HttpMethod.hasBody(endpoint.method) ? "application/json" : "application/x-www-form-urlencoded")
  if (content === undefined) return undefined
  const schemas = content.schemas as ReadonlyArray<Schema.Top>
  return schemas.length === 1 ? schemas[0] : Schema.Union(schemas)
}

const describe = (
  endpoint: HttpApiEndpoint.Top,
  annotations: Context.Context<never>,
  middleware: ReadonlySet<HttpApiMiddleware.AnyService>
): Endpoint => {
  const payload = payloadOf(endpoint)
  const contentBlockPaths = payload !== undefined && HttpMethod.hasBody(endpoint.method)
    ? arraysOf(payload.ast, SubmittedContentBlock)
    : []
  const query = [endpoint.query, HttpMethod.hasBody(endpoint.method) ? undefined : payload]
    .flatMap((schema) => schema === undefined ? [] : propertyNames(schema))
  return {
    schemas: {
      method: endpoint.method,
      params: endpoint.params,
      headers: endpoint.headers,
      query: endpoint.query,
      payload,
      options: parseOptionsOf(annotations)
    },
    limit: contentBlockPaths.length > 0
      ? MAX_MEDIA_REQUEST_BODY_BYTES
      : payload !== undefined && isSchema(payload.ast, WriteFileBody)
      ? FILE_WRITE_BODY_LIMIT_BYTES
      : DEFAULT_BODY_LIMIT_BYTES,
    contentBlockPaths,
    takesBody: payload !== undefined && HttpMethod.hasBody(endpoint.method),
    queryNames: [...new Set(query)].sort(),
    headerNames: endpoint.headers === undefined ? [] : propertyNames(endpoint.headers),
    authenticated: [...middleware].some(HttpApiMiddleware.isSecurity)
  }
}

/**
 * The router's settings, here and in effect/http's HttpRouter. A path matches a route exactly:
 * FindMyWay's defaults matched `/V1/orgs`, `/v1//orgs` and `/v1/orgs/` to `/v1/orgs`, so one
 * resource answered at many addresses. A path parameter up to 1,024 characters is matched
 * (FindMyWay's default, 100, made a longer bad id a `404` with no route, where the route's own
 * check answers `400 invalid_request` naming the parameter).
 */
export const ROUTER_CONFIG = {
  caseSensitive: true,
  ignoreDuplicateSlashes: false,
  ignoreTrailingSlash: false,
  maxParamLength: 1024
} as const satisfies Partial<FindMyWay.RouterConfig>

/**
 * Whether a path parameter of `match` is empty. FindMyWay, which has no setting for it, matches an
 * empty segment to a parameter (`/v1/orgs/` to `/v1/orgs/:orgID`, `/v1/orgs//projects` to
 * `/v1/orgs/:orgID/projects`): such a path takes no route, as a doubled slash elsewhere does not.
 */
export const hasEmptyParameter = (match: RouteMatch): boolean => {
  for (const name in match.params) if (match.params[name] === "") return true
  return false
}

export interface RouteTable {
  /** The endpoint `method` and `url` reach, if any. */
  readonly find: (method: string, url: string) => RouteMatch | undefined
  /** The methods with a route at `url`, the Api's or another (HEAD wherever GET is), sorted. */
  readonly methodsAt: (url: string) => ReadonlyArray<HttpMethod.HttpMethod>
}

/** A route served beside the Api's endpoints (a page, the OpenAPI document, a WebSocket). */
export interface OtherRoute {
  readonly method: HttpMethod.HttpMethod
  readonly path: `/${string}`
}

export const makeRouteTable = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  others: ReadonlyArray<OtherRoute>
): RouteTable => {
  const router = FindMyWay.make<Endpoint>(ROUTER_CONFIG)
  HttpApi.reflect(api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, mergedAnnotations, middleware }) => {
      router.on(endpoint.method, endpoint.path as FindMyWay.PathInput, describe(endpoint, mergedAnnotations, middleware))
    }
  })
  // The guards have nothing to check on these (no body, no query): they only say which methods a path takes.
  const otherRouter = FindMyWay.make<true>(ROUTER_CONFIG)
  for (const route of others) otherRouter.on(route.method, route.path, true)
  const find = (method: string, url: string): RouteMatch | undefined => {
    const result = router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined)
    return result && { endpoint: result.handler, params: result.params, searchParams: result.searchParams }
  }
  const takes = (method: string, url: string) => {
    const match = find(method, url)
    return (match !== undefined && !hasEmptyParameter(match)) || otherRouter.find(method === "HEAD" ? "GET" : method, url) !== undefined
  }
  return {
    find,
    methodsAt: (url) => [...HttpMethod.all].filter((method) => takes(method, url)).sort()
  }
}
