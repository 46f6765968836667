/**
 * The server's own OpenAPI document, read into what the fuzz test needs: every operation with
 * its path, query and header parameters, its request body schema and the statuses it declares.
 * `$ref`s are resolved one level at a time (`deref`), so recursive schemas (JsonValue) stay finite.
 */

/** A JSON Schema object as the document writes it. */
export type Schema = { readonly [keyword: string]: unknown }

export interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required: boolean
  readonly schema: Schema
}

export interface Operation {
  readonly id: string
  readonly method: string
  /** The path template, e.g. `/v1/orgs/{orgID}/projects`. */
  readonly path: string
  readonly pathParameters: ReadonlyArray<Parameter>
  readonly queryParameters: ReadonlyArray<Parameter>
  readonly headerParameters: ReadonlyArray<Parameter>
  readonly body: Schema | undefined
  /** The statuses the operation declares (success and error). */
  readonly statuses: ReadonlySet<number>
}

/** A schema with its `$ref` followed, and the name of the component it came from. */
export interface Resolved {
  readonly schema: Schema
  readonly component: string | undefined
}

export interface ApiDocument {
  readonly operations: ReadonlyArray<Operation>
  readonly deref: (schema: Schema) => Resolved
}

const REF_PREFIX = "#/components/schemas/"

const asSchema = (value: unknown): Schema => (typeof value === "object" && value !== null ? value as Schema : {})

export const readDocument = (document: unknown): ApiDocument => {
  const root = asSchema(document)
  const components = asSchema(asSchema(root.components).schemas)

  const deref = (schema: Schema): Resolved => {
    let current = schema
    let component: string | undefined
    // Siblings of a $ref (a `minimum` next to `$ref: Int`) narrow the referenced schema.
    while (typeof current.$ref === "string") {
      const ref = current.$ref
      if (!ref.startsWith(REF_PREFIX)) throw new Error(`unsupported $ref ${ref}`)
      component = ref.slice(REF_PREFIX.length)
      const target = components[component]
      if (target === undefined) throw new Error(`$ref to a missing component: ${ref}`)
      const { $ref: _, ...siblings } = current
      current = { ...asSchema(target), ...siblings }
    }
    return { schema: current, component }
  }

  const operations: Array<Operation> = []
  for (const [path, item] of Object.entries(asSchema(root.paths))) {
    for (const [method, rawOperation] of Object.entries(asSchema(item))) {
      const operation = asSchema(rawOperation)
      const parameters = ((operation.parameters ?? []) as ReadonlyArray<Schema>).map((parameter): Parameter => ({
        name: String(parameter.name),
        in: parameter.in as Parameter["in"],
        required: parameter.required === true,
        schema: asSchema(parameter.schema)
      }))
      const content = asSchema(asSchema(asSchema(operation.requestBody).content)["application/json"])
      operations.push({
        id: String(operation.operationId ?? `${method} ${path}`),
        method: method.toUpperCase(),
        path,
        pathParameters: parameters.filter((parameter) => parameter.in === "path"),
        queryParameters: parameters.filter((parameter) => parameter.in === "query"),
        headerParameters: parameters.filter((parameter) => parameter.in === "header"),
        body: content.schema === undefined ? undefined : asSchema(content.schema),
        statuses: new Set(Object.keys(asSchema(operation.responses)).map(Number))
      })
    }
  }
  return { operations, deref }
}

/** The id prefix a string schema's pattern asks for (`^org_[a-z2-7]{26}$` -> `org`), if any. */
export const idPrefixOf = (schema: Schema): string | undefined =>
  typeof schema.pattern === "string" ? /^\^([a-z]+)_\[a-z2-7\]\{26\}\$$/.exec(schema.pattern)?.[1] : undefined

/**
 * Whether a string parameter carries an integer (`NumberFromString`: "a string to be decoded into
 * a number"); the document has no other way of saying so.
 */
export const isIntegerText = (resolved: Resolved): boolean =>
  resolved.component === "NumberFromString" ||
  (resolved.schema.type === "string" && String(resolved.schema.description ?? "").includes("decoded into a number"))
