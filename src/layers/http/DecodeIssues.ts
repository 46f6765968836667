/**
 * Decode failures in the caller's words: Effect's SchemaIssue tree becomes our `issues` (a JSON
 * Pointer and a message per field) and the `error` sentence of `invalid_request`. Messages say
 * what was expected ("expected a string", "expected an integer between 1 and 100", "must be one
 * of: approve, deny", "is required", "is not allowed here; allowed fields: name"), use a schema's
 * own message where it has one, never quote the value received (it may be a secret sent in the
 * wrong place) and never print a schema's internals. The tree is walked with an explicit stack.
 */
import { SchemaAST as AST, type SchemaIssue } from "effect"
import { type Issue, InvalidRequest } from "../../domain/shared/Errors.ts"
import { andMore, MAX_LISTED_ISSUES } from "../../domain/shared/ListedIssues.ts"

/** Which part of the request failed its schema. */
export type RequestPart = "body" | "path" | "query" | "headers"

const PART_NAMES: Record<RequestPart, { readonly sentence: string; readonly members: string }> = {
  body: { sentence: "The request body does not match the API", members: "fields" },
  path: { sentence: "The path does not match the API", members: "parameters" },
  query: { sentence: "The query parameters do not match the API", members: "parameters" },
  headers: { sentence: "The headers do not match the API", members: "headers" }
}

const withoutUndefined = (types: ReadonlyArray<AST.AST>) => types.filter((type) => type._tag !== "Undefined")

/** The literals of a union of literals only (null among them), or undefined. */
const literalsOf = (ast: AST.AST): ReadonlyArray<string> | undefined => {
  const members = ast._tag === "Union" ? withoutUndefined(ast.types) : [ast]
  return members.every((member) => member._tag === "Literal" || member._tag === "Null")
    ? members.map((member) => member._tag === "Literal" ? String(member.literal) : "null")
    : undefined
}

/**
 * The property that tells a union of objects' members apart (`type` of content blocks) and its
 * values, when every member is an object whose property of that name is a literal.
 */
const findDiscriminant = (ast: AST.Union): { readonly name: string; readonly values: ReadonlyArray<string> } | undefined => {
  const members = withoutUndefined(ast.types)
  const [first] = members
  if (first === undefined || first._tag !== "Objects") return undefined
  for (const candidate of first.propertySignatures) {
    const values: Array<string> = []
    for (const member of members) {
      const property = member._tag === "Objects"
        ? member.propertySignatures.find((signature) => signature.name === candidate.name)
        : undefined
      if (property === undefined || property.type._tag !== "Literal") break
      values.push(String(property.type.literal))
    }
    if (values.length === members.length) return { name: String(candidate.name), values }
  }
  return undefined
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

/** The JSON Schema type a node's checks are written for. */
const jsonTypeOf = (ast: AST.AST) =>
  ast._tag === "String" ? "string" : ast._tag === "Number" ? "number" : ast._tag === "Arrays" ? "array" : ast._tag === "Objects"
    ? "object"
    : undefined

const LOWER_BOUNDS = new Set(["minimum", "exclusiveMinimum", "minLength", "minItems"])
const UPPER_BOUNDS = new Set(["maximum", "exclusiveMaximum", "maxLength", "maxItems"])

/** The constraints of a node's checks, as the JSON Schema they document: minimum, maxLength, pattern... */
const constraintsOf = (ast: AST.AST): Record<string, unknown> => {
  const constraints: Record<string, unknown> = {}
  const type = jsonTypeOf(ast)
  const visit = (checks: ReadonlyArray<AST.Check<any>>) => {
    for (const check of checks) {
      if (check._tag === "FilterGroup") {
        visit(check.checks)
        continue
      }
      const output = check.annotations?.toJsonSchema?.({ type, schemas: [] })
      const fragment = Array.isArray(output) ? output[0] : output
      if (fragment !== undefined && typeof fragment === "object") {
        for (const [key, value] of Object.entries(fragment)) {
          const known = constraints[key]
          // Several checks may bound a value (an integer's safe range, then the field's own): the tightest bound is the one to tell.
          if (typeof known === "number" && typeof value === "number" && (LOWER_BOUNDS.has(key) || UPPER_BOUNDS.has(key))) {
            constraints[key] = LOWER_BOUNDS.has(key) ? Math.max(known, value) : Math.min(known, value)
          } else {
            constraints[key] ??= value
          }
        }
      }
    }
  }
  if (ast.checks !== undefined) visit(ast.checks)
  return constraints
}

/**
 * A node with checks in words, from the JSON Schema its checks document: "an integer between 1
 * and 100". A pattern is mentioned only when the value failed it (`predicateFailed`), not when it
 * was not even a string.
 */
const describeChecked = (ast: AST.AST, predicateFailed: boolean, depth: number): string => {
  const c = constraintsOf(ast)
  if (ast._tag === "Number" || (ast._tag === "Declaration" && (c.type === "integer" || c.type === "number"))) {
    const noun = c.type === "integer" ? "an integer" : "a number"
    if (c.exclusiveMinimum !== undefined) return `${noun} greater than ${c.exclusiveMinimum}`
    return noun + bounds(c.minimum, c.maximum, "", "of")
  }
  switch (ast._tag) {
    case "String": {
      const length = c.minLength !== undefined && c.minLength === c.maxLength
        ? ` of exactly ${c.minLength} characters`
        : bounds(c.minLength, c.maxLength, " characters", "of")
      return "a string" + length + (predicateFailed && c.pattern !== undefined ? " in the expected format" : "")
    }
    case "Arrays":
      return "an array" + bounds(c.minItems, c.maxItems, " items", "with")
    default:
      return describeKind(ast, depth)
  }
}

/** What a schema accepts, as a noun phrase. Recursion follows the schema, never the input, and is bounded. */
const describe = (ast: AST.AST, depth = 0): string => {
  if (depth > 4) return "a valid value"
  if (ast.checks !== undefined) return describeChecked(ast, false, depth)
  // The caller sends the encoded side.
  if (ast.encoding !== undefined) return describe(AST.toEncoded(ast), depth + 1)
  return describeKind(ast, depth)
}

/** What a node accepts by its kind alone (its checks aside). */
const describeKind = (ast: AST.AST, depth: number): string => {
  switch (ast._tag) {
    case "String":
    case "TemplateLiteral":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "true or false"
    case "Literal":
      return String(ast.literal)
    case "Null":
      return "null"
    case "Objects":
      return "an object"
    case "Arrays":
      return "an array"
    case "Enum":
      return "one of: " + ast.enums.map(([, value]) => String(value)).join(", ")
    case "Union": {
      const literals = literalsOf(ast)
      if (literals !== undefined) return "one of: " + literals.join(", ")
      return [...new Set(withoutUndefined(ast.types).map((member) => describe(member, depth + 1)))].join(" or ")
    }
    case "Suspend":
      return describe(ast.thunk(), depth + 1)
    case "Declaration":
      return ast.encoding !== undefined ? describe(AST.toEncoded(ast), depth + 1) : "a valid value"
    default:
      return "a valid value"
  }
}

/** "expected a string", or for literals "must be one of: a, b" / "must be a". */
const expected = (ast: AST.AST, predicateFailed = false): string => {
  const literals = literalsOf(ast)
  if (literals !== undefined) return literals.length === 1 ? `must be ${literals[0]}` : `must be one of: ${literals.join(", ")}`
  return `expected ${ast.checks !== undefined ? describeChecked(ast, predicateFailed, 0) : describe(ast)}`
}

/** The schema's own message for a failure of `ast`, when it has one. */
const ownMessage = (ast: AST.AST): string | undefined => {
  const message = ast.annotations?.message
  return typeof message === "string" ? message : undefined
}

/** The value is not even of the kind its schema takes (a number for a string schema), seen through encodings. */
const isLeaf = (issue: SchemaIssue.Issue): boolean => {
  let inner = issue
  while (inner._tag === "Encoding") inner = inner.issue
  return inner._tag === "InvalidType" || (inner !== issue && inner._tag === "InvalidValue")
}

/** What a number too large for a double is told: `JSON.parse` reads `1e400` as Infinity. */
const UNREADABLE_NUMBER = "is a number beyond what a double holds (±1.7976931348623157e308); send a smaller number, or the value as a string"

/**
 * The keys, from `value`, of the first number in it that is not finite. A free-form field (any
 * JSON value) refuses a value holding one as a whole, in Effect's words "a JSON value", which
 * names neither the number nor what to do. Only a failing value is walked; a body's nesting is bounded.
 */
const unreadableNumberIn = (value: unknown): ReadonlyArray<PropertyKey> | undefined => {
  const pending: Array<{ readonly value: unknown; readonly keys: ReadonlyArray<PropertyKey> }> = [{ value, keys: [] }]
  while (pending.length > 0) {
    const next = pending.pop()!
    if (typeof next.value === "number" && !Number.isFinite(next.value)) return next.keys
    if (typeof next.value === "object" && next.value !== null) {
      const entries = Object.entries(next.value)
      for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i][1], keys: [...next.keys, entries[i][0]] })
    }
  }
  return undefined
}

/** Where a declaration's refusal points when the reason is a number no double holds in the value: at that number. */
const unreadableNumberPlace = (issue: SchemaIssue.Issue, place: Place): Place | undefined => {
  if (issue._tag !== "InvalidType" || issue.ast._tag !== "Declaration") return undefined
  const keys = unreadableNumberIn(issue.input)
  return keys === undefined ? undefined : { within: place, keys, taken: false }
}

/**
 * Where in the request an issue is: the keys of its Pointer within the place it is in. Its JSON
 * Pointer is spelled out only for an issue that is listed.
 */
interface Place {
  readonly within: Place | undefined
  readonly keys: ReadonlyArray<PropertyKey>
  /** Whether an issue here has been listed or counted already (one per path). */
  taken: boolean
}

/** The JSON Pointer (RFC 6901) of `place`. */
const pointerOf = (place: Place): string => {
  const places: Array<Place> = []
  for (let at: Place | undefined = place; at !== undefined; at = at.within) places.push(at)
  let pointer = ""
  for (let i = places.length - 1; i >= 0; i--) {
    for (const key of places[i].keys) pointer += "/" + String(key).replaceAll("~", "~0").replaceAll("/", "~1")
  }
  return pointer
}

interface Frame {
  readonly issue: SchemaIssue.Issue
  readonly place: Place
  /** The properties of the innermost object schema, for "allowed fields". */
  readonly fields: ReadonlyArray<string>
  /** The schema whose checks a Filter issue under it belongs to. */
  readonly checked: AST.AST | undefined
}

const discriminants = new WeakMap<AST.Union, ReturnType<typeof findDiscriminant>>()

/** A union's discriminant, found once for each union: a body may fail one union at each of its elements. */
const discriminantOf = (ast: AST.Union) => {
  if (!discriminants.has(ast)) discriminants.set(ast, findDiscriminant(ast))
  return discriminants.get(ast)
}

/** A walk of one issue tree: the issues listed so far, how many more places had one, the frames still to visit. */
interface Walk {
  readonly part: RequestPart
  readonly listed: Map<string, string>
  more: number
  readonly stack: Array<Frame>
}

/** An issue at `place`, listed with its message while the list has room, else counted; one per place. */
const add = (walk: Walk, place: Place, message: () => string) => {
  if (place.taken) return
  place.taken = true
  if (walk.listed.size === MAX_LISTED_ISSUES) {
    walk.more++
    return
  }
  const path = pointerOf(place)
  if (!walk.listed.has(path)) walk.listed.set(path, message())
}

/**
 * The issues of `root`, one per path: the first MAX_LISTED_ISSUES with their messages, and how many more
 * places have issues. Only a listed issue gets its path and message made: a body may fail at each
 * of half a million array elements, and saying where and what each expected was most of the
 * cost. Past the list an issue is counted by its place, a flag set, not by looking its path up.
 */
const formatIssues = (root: SchemaIssue.Issue, part: RequestPart) => {
  const walk: Walk = {
    part,
    listed: new Map(),
    more: 0,
    stack: [{ issue: root, place: { within: undefined, keys: [], taken: false }, fields: [], checked: undefined }]
  }
  while (walk.stack.length > 0) visitFrame(walk, walk.stack.pop()!)
  return { issues: Array.from(walk.listed, ([path, message]): Issue => ({ path, message })), more: walk.more }
}

/** One frame of the walk: its issue listed, or the issues under it pushed to be visited. */
const visitFrame = (walk: Walk, frame: Frame) => {
  const { checked, fields, issue, place } = frame
  // A query parameter given twice arrives as a list; no parameter of the API takes one (the
  // issues carry their input: the decode that explains a failure asks for it).
  if (walk.part === "query" && issue._tag !== "Pointer" && Array.isArray((issue as { readonly input?: unknown }).input)) {
    add(walk, place, () => "is given more than once; give it once")
    return
  }
  switch (issue._tag) {
    case "Pointer":
      walk.stack.push({ issue: issue.issue, place: { within: place, keys: issue.path, taken: false }, fields, checked })
      break
    case "MissingKey":
      add(walk, place, () => issue.annotations?.messageMissingKey ?? "is required")
      break
    case "UnexpectedKey":
      add(walk, place, () =>
        fields.length > 0
          ? `is not allowed here; allowed ${PART_NAMES[walk.part].members}: ${fields.join(", ")}`
          : "is not allowed here")
      break
    case "Forbidden":
      add(walk, place, () => "could not be checked")
      break
    case "InvalidType": {
      const unreadable = unreadableNumberPlace(issue, place)
      if (unreadable !== undefined) add(walk, unreadable, () => UNREADABLE_NUMBER)
      else add(walk, place, () => ownMessage(issue.ast) ?? expected(issue.ast))
      break
    }
    case "InvalidValue":
      // A filter's own message (ResourceName's "must be at most 64 characters (got 300)").
      add(walk, place, () => issue.annotations?.message ?? (checked !== undefined ? expected(checked, true) : "is not valid"))
      break
    case "Filter":
      visitFilter(walk, frame, issue)
      break
    case "Encoding":
      visitEncoding(walk, frame, issue)
      break
    case "Composite":
      visitComposite(walk, frame, issue)
      break
    case "AnyOf":
      visitAnyOf(walk, frame, issue)
      break
    case "OneOf":
      add(walk, place, () => ownMessage(issue.ast) ?? expected(issue.ast))
      break
  }
}

/** A check that failed: its own message, what the checked schema takes, or the issue under it. */
const visitFilter = (walk: Walk, { checked, fields, place }: Frame, issue: SchemaIssue.Filter) => {
  const message = issue.filter.annotations?.message ??
    (issue.issue._tag === "InvalidValue" ? issue.issue.annotations?.message : undefined)
  if (message !== undefined) add(walk, place, () => message)
  else if (issue.issue._tag === "InvalidValue" && checked !== undefined) add(walk, place, () => expected(checked, true))
  else walk.stack.push({ issue: issue.issue, place, fields, checked })
}

/**
 * The encoded side was not of its kind, or the transformation refused the value: its failure
 * message may quote the value, so what the schema takes is described instead.
 */
const visitEncoding = (walk: Walk, { checked, fields, place }: Frame, issue: SchemaIssue.Encoding) => {
  const message = ownMessage(issue.ast)
  const inner = issue.issue
  const unreadable = unreadableNumberPlace(inner, place)
  if (message !== undefined) add(walk, place, () => message)
  else if (unreadable !== undefined) add(walk, unreadable, () => UNREADABLE_NUMBER)
  else if (inner._tag === "InvalidType") {
    add(walk, place, () => issue.ast.checks !== undefined ? expected(issue.ast) : ownMessage(inner.ast) ?? expected(inner.ast))
  } else if (inner._tag === "InvalidValue") add(walk, place, () => expected(issue.ast))
  else walk.stack.push({ issue: inner, place, fields, checked })
}

/** An object's or array's issues: the schema's own message, or each of them, in order, under its fields. */
const visitComposite = (walk: Walk, { fields, place }: Frame, issue: SchemaIssue.Composite) => {
  const message = ownMessage(issue.ast)
  if (message !== undefined) {
    add(walk, place, () => message)
    return
  }
  const childFields = issue.ast._tag === "Objects"
    ? issue.ast.propertySignatures.map((property) => String(property.name))
    : fields
  for (let i = issue.issues.length - 1; i >= 0; i--) {
    walk.stack.push({ issue: issue.issues[i], place, fields: childFields, checked: issue.ast })
  }
}

/** A value that matched no member of a union. */
const visitAnyOf = (walk: Walk, { checked, fields, place }: Frame, issue: SchemaIssue.AnyOf) => {
  const message = ownMessage(issue.ast)
  if (message !== undefined) {
    add(walk, place, () => message)
    return
  }
  // The members the value was of the kind of, and how each failed (none: it was of no member's kind).
  const members = issue.issues
  // An object whose discriminant names no member (a content block of `type` "video"): said at the discriminant.
  const discriminant = members.length === 0 ? discriminantOf(issue.ast) : undefined
  const input: unknown = (issue as { readonly input?: unknown }).input
  if (discriminant !== undefined && typeof input === "object" && input !== null && !Array.isArray(input)) {
    add(
      walk,
      { within: place, keys: [discriminant.name], taken: false },
      () => Object.hasOwn(input, discriminant.name) ? `must be one of: ${discriminant.values.join(", ")}` : "is required"
    )
    return
  }
  if (members.length === 0 || literalsOf(issue.ast) !== undefined || (members.length > 1 && members.every(isLeaf))) {
    add(walk, place, () => expected(issue.ast))
  } else walk.stack.push({ issue: members[0], place, fields, checked })
}

/** The `invalid_request` for `issues` of one part of the request, and `more` places unlisted. */
export const partFailure = (issues: ReadonlyArray<Issue>, part: RequestPart, more = 0): InvalidRequest => {
  const listed = issues.map((issue) => `${issue.path || "(the whole " + part + ")"}: ${issue.message}`).join("; ")
  return new InvalidRequest({
    error: `${PART_NAMES[part].sentence}: ${listed}${andMore(more)}`,
    issues
  })
}

/** The `invalid_request` for a decode failure of one part of the request. */
export const decodeFailure = (root: SchemaIssue.Issue, part: RequestPart): InvalidRequest => {
  const { issues, more } = formatIssues(root, part)
  return partFailure(issues, part, more)
}
