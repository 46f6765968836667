/**
 * Decode failures in the caller's words: Effect's ParseIssue tree becomes our `issues` (a JSON
 * Pointer and a message per field) and the `error` sentence of `invalid_request`. Messages say
 * what was expected ("expected a string", "expected an integer between 1 and 100", "must be one
 * of: approve, deny", "is required", "is not allowed here; allowed fields: name"), use a schema's
 * own message where it has one, never quote the value received (it may be a secret sent in the
 * wrong place) and never print a schema's internals. The tree is walked with an explicit stack.
 */
import { Effect, type ParseResult, SchemaAST as AST } from "effect"
import { type Issue, InvalidRequest } from "../../domain/shared/Errors.ts"

/** Issues listed in one answer; the sentence says how many more there were. */
export const MAX_ISSUES = 10

/** Which part of the request failed its schema. */
export type RequestPart = "body" | "path" | "query" | "headers"

const PART_NAMES: Record<RequestPart, { readonly sentence: string; readonly members: string }> = {
  body: { sentence: "The request body does not match the API", members: "fields" },
  path: { sentence: "The path does not match the API", members: "parameters" },
  query: { sentence: "The query parameters do not match the API", members: "parameters" },
  headers: { sentence: "The headers do not match the API", members: "headers" }
}

const pointerOf = (path: ParseResult.Pointer["path"]): string =>
  (Array.isArray(path) ? path : [path]).map((key) => "/" + String(key).replaceAll("~", "~0").replaceAll("/", "~1"))
    .join("")

const literalText = (literal: AST.LiteralValue): string => literal === null ? "null" : String(literal)

const isNullLiteral = (ast: AST.AST) => ast._tag === "Literal" && ast.literal === null

const withoutUndefined = (types: ReadonlyArray<AST.AST>) => types.filter((type) => type._tag !== "UndefinedKeyword")

/** The literals of a union of literals only, or undefined. */
const literalsOf = (ast: AST.AST): ReadonlyArray<string> | undefined => {
  const members = ast._tag === "Union" ? withoutUndefined(ast.types) : [ast]
  return members.every((member) => member._tag === "Literal")
    ? members.map((member) => literalText((member as AST.Literal).literal))
    : undefined
}

/** " characters" or " character" after `count`. */
const unitFor = (unit: string, count: unknown) => count === 1 ? unit.slice(0, -1) : unit

/** "between 1 and 100", "of at least 1", "of 1 to 64 characters"... for the bounds present. */
const bounds = (low: unknown, high: unknown, unit: string, lead: string): string =>
  low !== undefined && high !== undefined
    ? unit === "" ? ` between ${low} and ${high}` : ` ${lead} ${low} to ${high}${unit}`
    : low !== undefined
    ? ` ${lead} at least ${low}${unitFor(unit, low)}`
    : high !== undefined
    ? ` ${lead} at most ${high}${unitFor(unit, high)}`
    : ""

/**
 * A refinement chain in words, from its JSON Schema annotations: "an integer between 1 and 100".
 * A pattern is mentioned only when the value failed it (`predicateFailed`), not when it was not
 * even a string.
 */
const describeRefinement = (ast: AST.Refinement, predicateFailed: boolean): string => {
  const c: Record<string, unknown> = {}
  let base: AST.AST = ast
  // Through refinements and transformations to the type the constraints apply to.
  while (base._tag === "Refinement" || base._tag === "Transformation") {
    if (base._tag === "Refinement") {
      const annotation = AST.getJSONSchemaAnnotation(base)
      if (annotation._tag === "Some") for (const [key, value] of Object.entries(annotation.value)) c[key] ??= value
      base = base.from
    } else base = base.to
  }
  switch (base._tag) {
    case "NumberKeyword": {
      const noun = c.type === "integer" ? "an integer" : "a number"
      if (c.exclusiveMinimum !== undefined) return `${noun} greater than ${c.exclusiveMinimum}`
      return noun + bounds(c.minimum, c.maximum, "", "of")
    }
    case "StringKeyword": {
      const length = c.minLength !== undefined && c.minLength === c.maxLength
        ? ` of exactly ${c.minLength} characters`
        : bounds(c.minLength, c.maxLength, " characters", "of")
      return "a string" + length + (predicateFailed && c.pattern !== undefined ? " in the expected format" : "")
    }
    case "TupleType":
      return "an array" + bounds(c.minItems, c.maxItems, " items", "with")
    default:
      return describe(base)
  }
}

/** What a schema accepts, as a noun phrase. Recursion follows the schema, never the input, and is bounded. */
const describe = (ast: AST.AST, depth = 0): string => {
  if (depth > 4) return "a valid value"
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "true or false"
    case "Literal":
      return literalText(ast.literal)
    case "TypeLiteral":
      return "an object"
    case "TupleType":
      return "an array"
    case "Enums":
      return "one of: " + ast.enums.map(([, value]) => String(value)).join(", ")
    case "Union": {
      const literals = literalsOf(ast)
      if (literals !== undefined) return "one of: " + literals.join(", ")
      return [...new Set(withoutUndefined(ast.types).map((member) => describe(member, depth + 1)))].join(" or ")
    }
    case "Refinement":
      return describeRefinement(ast, false)
    case "Transformation":
      // The caller sends the encoded side.
      return describe(ast.from, depth + 1)
    case "Suspend":
      return describe(ast.f(), depth + 1)
    default:
      return "a valid value"
  }
}

/** "expected a string", or for literals "must be one of: a, b" / "must be a". */
const expected = (ast: AST.AST, predicateFailed = false): string => {
  const literals = literalsOf(ast)
  if (literals !== undefined) return literals.length === 1 ? `must be ${literals[0]}` : `must be one of: ${literals.join(", ")}`
  return `expected ${ast._tag === "Refinement" ? describeRefinement(ast, predicateFailed) : describe(ast)}`
}

/** The schema's own message for `issue`, when it has one that applies. */
const ownMessage = (issue: ParseResult.ParseIssue & { readonly ast: AST.AST }): string | undefined => {
  const annotation = AST.getMessageAnnotation(issue.ast)
  if (annotation._tag === "None") return undefined
  const result = annotation.value(issue)
  const baseFailed = (issue._tag === "Refinement" && issue.kind === "From") ||
    (issue._tag === "Transformation" && issue.kind === "Encoded")
  const { message, override } = typeof result === "object" && "override" in result
    ? result
    : { message: result, override: false }
  if (baseFailed && !override) return undefined
  return typeof message === "string" ? message : Effect.runSync(message)
}

/**
 * True when `issue` says the value is not even of the expected kind: under it, only the base
 * types of refinements and encoded sides of transformations failed, or a transformation could
 * not convert the value. Nothing field-level below it is worth reporting.
 */
const isLeaf = (issue: ParseResult.ParseIssue): boolean => {
  let inner = issue
  while (
    (inner._tag === "Refinement" && (inner === issue || inner.kind === "From")) ||
    (inner._tag === "Transformation" && inner.kind === "Encoded")
  ) inner = inner.issue
  return inner._tag === "Type" || (inner._tag === "Transformation" && inner.kind === "Transformation")
}

/**
 * True when the value was of the kind the schema takes (a string for a string schema) and broke
 * one of its rules or a part of it; false when it was not even of that kind.
 */
const isOfTheKind = (issue: ParseResult.ParseIssue): boolean => {
  let inner = issue
  while (
    (inner._tag === "Refinement" && inner.kind === "From") ||
    (inner._tag === "Transformation" && inner.kind === "Encoded")
  ) inner = inner.issue
  return inner._tag !== "Type"
}

interface Frame {
  readonly issue: ParseResult.ParseIssue
  readonly path: string
  /** The properties of the innermost object schema, for "allowed fields". */
  readonly fields: ReadonlyArray<string>
}

/** The issues of `root`, one per path, the first MAX_ISSUES of them, and how many more there were. */
const formatIssues = (root: ParseResult.ParseIssue, part: RequestPart) => {
  const byPath = new Map<string, string>()
  let more = 0
  const add = (path: string, message: string) => {
    if (byPath.has(path)) return
    if (byPath.size < MAX_ISSUES) byPath.set(path, message)
    else more++
  }
  const stack: Array<Frame> = [{ issue: root, path: "", fields: [] }]
  while (stack.length > 0) {
    const { fields, issue, path } = stack.pop()!
    // A query parameter given twice arrives as a list; no parameter of the API takes one.
    if (part === "query" && issue._tag !== "Pointer" && Array.isArray(issue.actual)) {
      add(path, "is given more than once; give it once")
      continue
    }
    const push = (child: ParseResult.ParseIssue, childPath = path, childFields = fields) =>
      stack.push({ issue: child, path: childPath, fields: childFields })
    switch (issue._tag) {
      case "Pointer":
        push(issue.issue, path + pointerOf(issue.path))
        break
      case "Missing":
        add(path, issue.message ?? "is required")
        break
      case "Unexpected":
        add(
          path,
          fields.length > 0
            ? `is not allowed here; allowed ${PART_NAMES[part].members}: ${fields.join(", ")}`
            : "is not allowed here"
        )
        break
      case "Forbidden":
        add(path, "could not be checked")
        break
      case "Type":
        // A filter's own message (ResourceName's "must be at most 64 characters (got 300)"); a
        // transformation's failure message may quote the value, so its target is described instead.
        add(
          path,
          ownMessage(issue) ??
            (issue.ast._tag === "Refinement" && issue.message !== undefined
              ? issue.message
              : expected(issue.ast._tag === "Transformation" ? issue.ast.to : issue.ast))
        )
        break
      case "Refinement":
      case "Transformation": {
        const message = ownMessage(issue)
        if (message !== undefined) add(path, message)
        else if (issue._tag === "Refinement" && issue.kind === "Predicate") {
          add(path, issue.issue._tag === "Type" && issue.issue.message !== undefined ? issue.issue.message : expected(issue.ast, true))
        } else if (issue._tag === "Refinement" && isLeaf(issue)) add(path, expected(issue.ast))
        else push(issue.issue)
        break
      }
      case "Composite": {
        const message = ownMessage(issue)
        if (message !== undefined) {
          add(path, message)
          break
        }
        const issues = (Array.isArray(issue.issues) ? issue.issues : [issue.issues]) as ReadonlyArray<ParseResult.ParseIssue>
        if (issue.ast._tag === "Union") {
          // Leave out "expected undefined" (an optional field); literals as one list.
          const members = issues.filter((member) => !(member._tag === "Type" && member.ast._tag === "UndefinedKeyword"))
          // A nullable field whose value is of the right kind but breaks its rule: that rule, not "or null".
          const ruled = members.filter((member) => !(member._tag === "Type" && isNullLiteral(member.ast)))
          if (ruled.length === 1 && ruled.length < members.length && isOfTheKind(ruled[0])) {
            push(ruled[0])
            break
          }
          if (literalsOf(issue.ast) !== undefined || (members.length > 1 && members.every(isLeaf))) {
            add(path, expected(issue.ast))
          } else if (members.length > 0) push(members[0])
          break
        }
        const childFields = issue.ast._tag === "TypeLiteral"
          ? issue.ast.propertySignatures.map((property) => String(property.name))
          : fields
        for (let i = issues.length - 1; i >= 0; i--) push(issues[i], path, childFields)
      }
    }
  }
  return { issues: Array.from(byPath, ([path, message]): Issue => ({ path, message })), more }
}

/** The `invalid_request` for a decode failure of one part of the request. */
export const decodeFailure = (root: ParseResult.ParseIssue, part: RequestPart): InvalidRequest => {
  const { issues, more } = formatIssues(root, part)
  const listed = issues.map((issue) => `${issue.path || "(the whole " + part + ")"}: ${issue.message}`).join("; ")
  return new InvalidRequest({
    error: `${PART_NAMES[part].sentence}: ${listed}${more > 0 ? ` (and ${more} more)` : ""}`,
    issues
  })
}
