/**
 * What the guards need to know of each endpoint, derived from the Api itself (nothing listed
 * twice): its body limit and where its body carries content blocks, the query parameters it
 * declares, whether it authenticates, and its schemas. Matched with the router @effect/platform
 * uses (find-my-way-ts), so a request finds the same endpoint here as in the Api's router.
 */
import { HttpApi, type HttpApiEndpoint, type HttpApiGroup, HttpApiMiddleware, HttpMethod } from "@effect/platform"
import { type Schema, SchemaAST as AST } from "effect"
import * as FindMyWay from "find-my-way-ts"
import { SubmittedContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import { FILE_TRANSFER_MAX_BYTES } from "../../domain/machines/MachineFiles.ts"
import { WriteFileBody } from "../../domain/machines/Machines.ts"
import { MAX_MEDIA_REQUEST_BODY_BYTES } from "../../domain/runtime/Limits.ts"
import type { BodyRules } from "./JsonBody.ts"

/** Request bodies larger than this are refused with 413 `request_too_large`, unless their route allows more. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024

/** A whole file written to a machine: its largest content in base64, and room for the rest of the body. */
export const FILE_WRITE_BODY_LIMIT_BYTES = Math.ceil(FILE_TRANSFER_MAX_BYTES / 3) * 4 + 64 * 1024

export interface Endpoint extends BodyRules {
  readonly schemas: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  /** Query parameters the endpoint declares. */
  readonly queryNames: ReadonlyArray<string>
  /** Whether a security middleware guards it. */
  readonly authenticated: boolean
}

export interface RouteMatch {
  readonly endpoint: Endpoint
  readonly params: Readonly<Record<string, string | undefined>>
  readonly searchParams: Readonly<Record<string, string | ReadonlyArray<string>>>
}

/** The property paths (from the root of `root`) of arrays whose elements are `element`. */
const arraysOf = (root: AST.AST, element: AST.AST): Array<Array<string>> => {
  const found: Array<Array<string>> = []
  const expanded = new Set<AST.AST>()
  const pending: Array<readonly [AST.AST, Array<string>]> = [[root, []]]
  while (pending.length > 0) {
    const [ast, path] = pending.pop()!
    switch (ast._tag) {
      case "TypeLiteral":
        for (const property of ast.propertySignatures) pending.push([property.type, [...path, String(property.name)]])
        break
      case "TupleType":
        if (ast.rest.some((rest) => rest.type === element)) found.push(path)
        break
      case "Union":
        for (const member of ast.types) pending.push([member, path])
        break
      case "Refinement":
      case "Transformation":
        // What arrives is the encoded side.
        pending.push([ast.from, path])
        break
      case "Suspend":
        if (!expanded.has(ast)) {
          expanded.add(ast)
          pending.push([ast.f(), path])
        }
    }
  }
  return found
}

const propertyNames = (schema: Schema.Schema.All): Array<string> =>
  AST.getPropertySignatures(schema.ast).map((property) => String(property.name))

const describe = (
  schemas: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps,
  middleware: ReadonlySet<HttpApiMiddleware.TagClassAny>
): Endpoint => {
  const contentBlockPaths = schemas.payloadSchema._tag === "Some"
    ? arraysOf(schemas.payloadSchema.value.ast, SubmittedContentBlock.ast)
    : []
  const query = [schemas.urlParamsSchema, HttpMethod.hasBody(schemas.method) ? undefined : schemas.payloadSchema]
    .flatMap((schema) => schema?._tag === "Some" ? propertyNames(schema.value) : [])
  return {
    schemas,
    limit: contentBlockPaths.length > 0
      ? MAX_MEDIA_REQUEST_BODY_BYTES
      : schemas.payloadSchema._tag === "Some" && schemas.payloadSchema.value.ast === WriteFileBody.ast
      ? FILE_WRITE_BODY_LIMIT_BYTES
      : DEFAULT_BODY_LIMIT_BYTES,
    contentBlockPaths,
    queryNames: [...new Set(query)].sort(),
    authenticated: [...middleware].some(HttpApiMiddleware.isSecurity)
  }
}

export interface RouteTable {
  /** The endpoint `method` and `url` reach, if any. */
  readonly find: (method: string, url: string) => RouteMatch | undefined
}

export const makeRouteTable = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): RouteTable => {
  const router = FindMyWay.make<Endpoint>()
  HttpApi.reflect(api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, middleware }) => {
      const schemas = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
      router.on(schemas.method, schemas.path, describe(schemas, middleware))
    }
  })
  return {
    find: (method, url) => {
      const result = router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined)
      return result && { endpoint: result.handler, params: result.params, searchParams: result.searchParams }
    }
  }
}
