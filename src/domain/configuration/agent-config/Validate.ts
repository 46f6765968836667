/**
 * Checks a parsed source against AgentConfigDefinition and turns every problem into one issue
 * with its JSON pointer and position: an unknown property points at its key, a missing one at
 * the object that lacks it, any other problem at the offending value. A message never quotes the
 * value (it may be a secret's value put where a secret's name belongs): "Expected string, got an
 * array". A property named `__proto__`, anywhere, is an issue at its key.
 */
import { Either, ParseResult, Schema } from "effect"
import type { Issue } from "../../shared/Errors.ts"
import { type AgentConfigDefinition as Definition, AgentConfigDefinition } from "./Definition.ts"
import type { ParsedSource } from "./Source.ts"

const decode = Schema.decodeUnknownEither(AgentConfigDefinition, { errors: "all", onExcessProperty: "error" })

/** "Expected X, actual Y" from each member of a union, merged into one message ("actual" dropped). */
const EXPECTED = /^Expected (.*?), actual /s

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

const messageFor = (tag: string, message: string): string => {
  if (tag === "Missing") return "is required"
  if (tag === "Unexpected") {
    const pattern = /^is unexpected, expected: a string matching the pattern (.*)$/s.exec(message)
    if (pattern !== null) return `is not an allowed name here (names match ${pattern[1]})`
    return message.replace(/^is unexpected, expected: /, "is not allowed here; allowed: ")
  }
  return message
}

const PROTO_KEY_MESSAGE = "__proto__ is not accepted as a property name; rename the property"

/**
 * Where `root` has a property named `__proto__`. Decoding would drop it (assigning `__proto__` to
 * an object sets its prototype), so a free-form object such as a tool's `input_schema` would
 * silently lose it; it is refused instead, as it is in a request body. Walked with a stack, not
 * recursion; an object reached twice through YAML aliases is looked at once.
 */
const protoKeyPaths = (root: unknown): ReadonlyArray<ReadonlyArray<PropertyKey>> => {
  const found: Array<ReadonlyArray<PropertyKey>> = []
  const seen = new Set<object>()
  const pending: Array<readonly [unknown, ReadonlyArray<PropertyKey>]> = [[root, []]]
  while (pending.length > 0) {
    const [value, path] = pending.pop()!
    if (typeof value !== "object" || value === null || seen.has(value)) continue
    seen.add(value)
    if (Array.isArray(value)) {
      value.forEach((item, index) => pending.push([item, [...path, index]]))
      continue
    }
    if (Object.hasOwn(value, "__proto__")) found.push([...path, "__proto__"])
    for (const [key, item] of Object.entries(value)) pending.push([item, [...path, key]])
  }
  return found
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
  const protoKeys = protoKeyPaths(value)
  if (protoKeys.length > 0) {
    return {
      _tag: "Invalid",
      issues: sortIssues(protoKeys.map((path) => source.issueAt(path, PROTO_KEY_MESSAGE, "key")))
    }
  }
  const result = decode(value)
  if (Either.isRight(result)) return { _tag: "Valid", definition: result.right }

  interface Found {
    readonly path: ReadonlyArray<PropertyKey>
    readonly tag: string
    readonly messages: Array<string>
  }
  const byPath = new Map<string, Found>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(result.left)) {
    // An optional field reports "Expected undefined" beside the real problem; it says nothing.
    if (issue._tag === "Type" && issue.message.startsWith("Expected undefined, actual")) continue
    const key = JSON.stringify(issue.path.map(String)) + issue._tag
    const found = byPath.get(key)
    if (found === undefined) {
      byPath.set(key, { path: issue.path, tag: issue._tag, messages: [issue.message] })
    } else {
      found.messages.push(issue.message)
    }
  }
  // A refinement at a path says more than the union members that did not match there.
  const refined = new Set(
    Array.from(byPath.values()).filter((f) => f.tag === "Refinement").map((f) => JSON.stringify(f.path.map(String)))
  )
  const issues: Array<Issue> = []
  for (const found of byPath.values()) {
    if (found.tag === "Type" && refined.has(JSON.stringify(found.path.map(String)))) continue
    const matches = found.messages.map((message) => EXPECTED.exec(message))
    const message = matches.every((m) => m !== null)
      ? `Expected ${matches.map((m) => m![1]).join(" | ")}, got ${kindOf(valueAt(value, found.path))}`
      : messageFor(found.tag, found.messages.find((_, index) => matches[index] === null)!)
    issues.push(source.issueAt(found.path, message, found.tag === "Unexpected" ? "key" : "value"))
  }
  return { _tag: "Invalid", issues: sortIssues(issues) }
}

/** Issues in document order. */
export const sortIssues = (issues: ReadonlyArray<Issue>): ReadonlyArray<Issue> =>
  [...issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0))
