/**
 * Checks a parsed source against AgentConfigDefinition and turns every problem into one issue
 * with its JSON pointer and position: an unknown property points at its key, a missing one at
 * the object that lacks it, any other problem at the offending value. A message never quotes the
 * value (it may be a secret's value put where a secret's name belongs): "Expected string, got an
 * array". A property named `__proto__`, anywhere, is an issue at its key; a string or a property
 * name holding a NUL character or an unpaired surrogate, anywhere, is an issue too.
 */
import { Exit, Schema, SchemaAST, SchemaIssue } from "effect"
import type { Issue } from "../../shared/Errors.ts"
import { pointerOf } from "../../shared/JsonPointer.ts"
import { unstorableCharacterOf, unstorableMessage } from "../../shared/StorableText.ts"
import { type AgentConfigDefinition as Definition, AgentConfigDefinition } from "./Definition.ts"
import type { ParsedSource } from "./Source.ts"

const decode = Schema.decodeUnknownExit(AgentConfigDefinition, { errors: "all", onExcessProperty: "error" })

/** What kind of value a JSON value is, in words, without the value. */
const kindOf = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "an array"
    : typeof value === "object"
    ? "an object"
    : typeof value === "string"
    ? "a string"
    : typeof value === "number"
    ? "a number"
    : typeof value === "boolean"
    ? "a boolean"
    : "a value of another kind"

const valueAt = (root: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (value, key) => typeof value === "object" && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    root
  )

/** What a schema expects, in words and without its internals: `"allow" | "ask"`, `string`, `object`. */
const expectedOf = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union":
      return ast.types.filter((type) => type._tag !== "Undefined").map(expectedOf).join(" | ")
    case "Objects":
      return "object"
    case "Arrays":
      return "array"
    case "Null":
    case "String":
    case "Number":
    case "Boolean":
      return ast._tag.toLowerCase()
    case "Suspend":
      return expectedOf(ast.thunk())
    default:
      return "a value of another kind"
  }
}

/** A string's own message (a filter's, a literal's), if it has one. */
const messageOf = (annotations: Schema.Annotations.Annotations | undefined): string | undefined =>
  typeof annotations?.message === "string" ? annotations.message : undefined

/** The patterns the names of a record's keys must match, from their `isPattern` checks. */
const keyPatternsOf = (ast: SchemaAST.Objects): ReadonlyArray<string> =>
  ast.indexSignatures.flatMap((index) =>
    (index.parameter.checks ?? []).flatMap((check) => {
      const representation = check.annotations?.representation as { id?: string; payload?: { source?: string } } | undefined
      return representation?.id === "effect/schema/isPattern" && representation.payload?.source !== undefined
        ? [representation.payload.source]
        : []
    })
  )

const unexpectedKeyMessage = (ast: SchemaAST.AST): string => {
  if (ast._tag !== "Objects") return "is not allowed here"
  const names = ast.propertySignatures.map((property) => JSON.stringify(String(property.name)))
  if (names.length > 0) return `is not allowed here; allowed: ${names.join(" | ")}`
  const patterns = keyPatternsOf(ast)
  return patterns.length > 0 ? `is not an allowed name here (names match ${patterns.join(", ")})` : "is not allowed here"
}

interface Found {
  readonly path: ReadonlyArray<PropertyKey>
  readonly anchor: "key" | "value"
  readonly message: string
}

/**
 * The problems of a failed decoding, one per place: an unknown property at its key, a missing
 * one, a filter's own message ("must not be empty"), or "Expected X, got a string" (never the
 * value). A union that no member matched says what it expected, unless a member got far enough
 * to name the problem inside the value (a JSON value's infinite number).
 */
const problemsOf = (root: unknown, issue: SchemaIssue.Issue): Array<Found> => {
  const found: Array<Found> = []
  const pending: Array<readonly [SchemaIssue.Issue, ReadonlyArray<PropertyKey>]> = [[issue, []]]
  const got = (path: ReadonlyArray<PropertyKey>) => kindOf(valueAt(root, path))
  while (pending.length > 0) {
    const [current, path] = pending.pop()!
    switch (current._tag) {
      case "Pointer":
        pending.push([current.issue, [...path, ...current.path]])
        break
      case "Composite":
        for (const inner of [...current.issues].reverse()) pending.push([inner, path])
        break
      case "Encoding":
        pending.push([current.issue, path])
        break
      case "AnyOf":
        if (current.issues.length > 0) {
          for (const inner of [...current.issues].reverse()) pending.push([inner, path])
        } else {
          found.push({ path, anchor: "value", message: `Expected ${expectedOf(current.ast)}, got ${got(path)}` })
        }
        break
      case "MissingKey":
        found.push({ path, anchor: "value", message: "is required" })
        break
      case "UnexpectedKey":
        found.push({ path, anchor: "key", message: unexpectedKeyMessage(current.ast) })
        break
      case "InvalidType":
        found.push({
          path,
          anchor: "value",
          message: messageOf(current.ast.annotations) ?? `Expected ${expectedOf(current.ast)}, got ${got(path)}`
        })
        break
      case "Filter": {
        const annotations = current.filter.annotations
        const own = (current.issue._tag === "InvalidValue" ? messageOf(current.issue.annotations) : undefined) ??
          messageOf(annotations)
        found.push({
          path,
          anchor: "value",
          message: own ?? `Expected ${annotations?.expected ?? "a valid value"}, got ${got(path)}`
        })
        break
      }
      case "InvalidValue":
      case "Forbidden":
        found.push({ path, anchor: "value", message: messageOf(current.annotations) ?? "is not valid" })
        break
      case "OneOf":
        found.push({ path, anchor: "value", message: `matches more than one of ${expectedOf(current.ast)}` })
        break
    }
  }
  return found
}

const PROTO_KEY_MESSAGE = "__proto__ is not accepted as a property name; rename the property"

/**
 * What decoding cannot be trusted with, anywhere in the document (a tool's `input_schema`, an
 * `env_overlay`, any string), as issues in walk order:
 * - a property named `__proto__`, at its key. Decoding would drop it (assigning `__proto__` to an
 *   object sets its prototype), so a free-form object would silently lose it; it is refused
 *   instead, as it is in a request body.
 * - a string, or a property name, holding a NUL character or an unpaired UTF-16 surrogate, which
 *   the source's own escapes can write (YAML `"\0"`, `"\x00"`, `"\ud800"`; JSON `\u0000`) though
 *   the request body cannot: the database cannot store either (StorableText.ts). A string's issue
 *   is at the string; a property name's at the object holding it (positioned at the key), so that
 *   the pointer does not carry the character. One issue per pointer.
 * Walked with a stack, not recursion; an object reached twice through YAML aliases is looked at once.
 */
const unusableTextIssues = (source: ParsedSource): Array<Issue> => {
  const issues: Array<Issue> = []
  const pointers = new Set<string>()
  const add = (issue: Issue) => {
    if (pointers.has(issue.path)) return
    pointers.add(issue.path)
    issues.push(issue)
  }
  const seen = new Set<object>()
  const pending: Array<readonly [unknown, ReadonlyArray<PropertyKey>]> = [[source.value, []]]
  while (pending.length > 0) {
    const [value, path] = pending.pop()!
    if (typeof value === "string") {
      const found = unstorableCharacterOf(value)
      if (found !== undefined) add(source.issueAt(path, unstorableMessage(found)))
      continue
    }
    if (typeof value !== "object" || value === null || seen.has(value)) continue
    seen.add(value)
    if (Array.isArray(value)) {
      value.forEach((item, index) => pending.push([item, [...path, index]]))
      continue
    }
    if (Object.hasOwn(value, "__proto__")) add(source.issueAt([...path, "__proto__"], PROTO_KEY_MESSAGE, "key"))
    for (const [key, item] of Object.entries(value)) {
      const found = unstorableCharacterOf(key)
      if (found !== undefined) {
        add({ ...source.issueAt([...path, key], unstorableMessage(found, true), "key"), path: pointerOf(path) })
      }
      pending.push([item, [...path, key]])
    }
  }
  return issues
}

export type ValidationResult =
  | { readonly _tag: "Valid"; readonly definition: Definition }
  | { readonly _tag: "Invalid"; readonly issues: ReadonlyArray<Issue> }

export const validateDefinition = (source: ParsedSource): ValidationResult => {
  const value = source.value
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      _tag: "Invalid",
      issues: [source.issueAt([], "the document must be an object (a mapping) with instruction and model")]
    }
  }
  const unusable = unusableTextIssues(source)
  if (unusable.length > 0) return { _tag: "Invalid", issues: sortIssues(unusable) }
  const result = decode(value)
  if (Exit.isSuccess(result)) return { _tag: "Valid", definition: result.value }
  const error = result.cause.reasons.find((reason) => reason._tag === "Fail")
  if (error === undefined) throw new Error("decoding an agent config definition failed without a schema error")
  const seen = new Set<string>()
  const issues: Array<Issue> = []
  for (const found of problemsOf(value, error.error.issue)) {
    // One issue per place.
    const key = JSON.stringify(found.path.map(String))
    if (seen.has(key)) continue
    seen.add(key)
    issues.push(source.issueAt(found.path, found.message, found.anchor))
  }
  return { _tag: "Invalid", issues: sortIssues(issues) }
}

/** Issues in document order. */
export const sortIssues = (issues: ReadonlyArray<Issue>): ReadonlyArray<Issue> =>
  [...issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0))
