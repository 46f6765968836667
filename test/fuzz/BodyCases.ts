/**
 * Request bodies for one operation: valid ones from its schema, and hostile variants of a valid
 * one (a wrong type, a missing or an extra property, a number literal JSON.stringify would never
 * write, a broken document, an odd string, nesting thousands of levels deep). Each says whether
 * it breaks the published schema, and whether it holds text Postgres cannot store, so the
 * properties know what the answer must be.
 */
import fc from "fast-check"
import type { Schema } from "./OpenApiDocument.ts"
import { conforms } from "./SchemaCheck.ts"
import { valueFor, type ValueContext } from "./SchemaValues.ts"
import {
  BROKEN_BODIES,
  deepValue,
  holdsUnstorableText,
  nestingDepth,
  NUMBER_LITERALS,
  oddString,
  wrongValue
} from "./HostileValues.ts"

export interface BodyCase {
  readonly text: string
  /** A JavaScript expression that rebuilds a long `text`. */
  readonly recipe?: string
  /**
   * The body is not JSON, or its value does not conform to the operation's schema (undefined:
   * not checked, for a body nested deeper than the checker recurses).
   */
  readonly breaksSchema: boolean | undefined
  /** A string holds a NUL character or a lone surrogate. */
  readonly unstorableText: boolean
  /** What was done to a valid body, for the report. */
  readonly summary: string
}

type Path = ReadonlyArray<string | number>

interface Node {
  readonly path: Path
  readonly value: unknown
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Every node of a JSON value, the root first. */
const nodesOf = (value: unknown, path: Path = []): Array<Node> => {
  const children = Array.isArray(value)
    ? value.flatMap((item, index) => nodesOf(item, [...path, index]))
    : isObject(value)
    ? Object.entries(value).flatMap(([key, item]) => nodesOf(item, [...path, key]))
    : []
  return [{ path, value }, ...children]
}

const pointer = (path: Path) => path.length === 0 ? "the body" : "/" + path.join("/")

/** `value` with the node at `path` replaced (`undefined`: removed). */
const replaceAt = (value: unknown, path: Path, replacement: unknown): unknown => {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  if (Array.isArray(value)) {
    const copy = [...value]
    if (replacement === undefined && rest.length === 0) copy.splice(head as number, 1)
    else copy[head as number] = replaceAt(copy[head as number], rest, replacement)
    return copy
  }
  const copy = { ...(value as Record<string, unknown>) }
  if (replacement === undefined && rest.length === 0) delete copy[head as string]
  else copy[head as string] = replaceAt(copy[head as string], rest, replacement)
  return copy
}

/** JSON text with a raw (not JSON-encoded) fragment at `path`. */
const withRawFragment = (value: unknown, path: Path, fragment: string): string => {
  const marker = `\u0001raw-${Math.random()}\u0001`
  return JSON.stringify(replaceAt(value, path, marker)).replace(JSON.stringify(marker), () => fragment)
}

/** Bodies nested deeper than this are not checked against the schema (the checker recurses). */
const CHECKED_DEPTH = 200

const pick = <A>(items: ReadonlyArray<A>, index: number): A => items[index % items.length]

export interface BodyCases {
  readonly valid: fc.Arbitrary<BodyCase>
  readonly malformed: fc.Arbitrary<BodyCase>
  readonly oddStrings: fc.Arbitrary<BodyCase>
  readonly deepNesting: fc.Arbitrary<BodyCase>
}

export const bodyCases = (schema: Schema, context: ValueContext): BodyCases => {
  const breaks = (value: unknown) => !conforms(context.deref, schema, value)
  const fromValue = (value: unknown, summary: string, recipe?: string): BodyCase => ({
    text: JSON.stringify(value),
    ...(recipe === undefined ? {} : { recipe }),
    breaksSchema: breaks(value),
    unstorableText: holdsUnstorableText(value),
    summary
  })
  const fromText = (text: string, summary: string, recipe?: string): BodyCase => {
    let parsed: { readonly value: unknown } | undefined
    try {
      parsed = { value: JSON.parse(text) }
    } catch {
      parsed = undefined
    }
    return {
      text,
      ...(recipe === undefined ? {} : { recipe }),
      breaksSchema: parsed === undefined || (nestingDepth(text) > CHECKED_DEPTH ? undefined : breaks(parsed.value)),
      unstorableText: parsed !== undefined && holdsUnstorableText(parsed.value),
      summary
    }
  }
  const validValue = valueFor(schema, context)
  const valid = validValue.map((value) => fromValue(value, "a valid body"))

  const wrongType = fc.tuple(validValue, fc.nat(), wrongValue).map(([value, index, wrong]) => {
    const node = pick(nodesOf(value), index)
    return fromValue(replaceAt(value, node.path, wrong), `${JSON.stringify(wrong)} at ${pointer(node.path)}`)
  })
  const missing = fc.tuple(validValue, fc.nat()).map(([value, index]) => {
    const properties = nodesOf(value).filter((node) => node.path.length > 0)
    if (properties.length === 0) return fromValue(value, "a valid body (nothing to remove)")
    const node = pick(properties, index)
    return fromValue(replaceAt(value, node.path, undefined), `${pointer(node.path)} left out`)
  })
  const extra = fc.tuple(validValue, fc.nat(), fc.constantFrom("extra", "__proto__", "constructor", "Name", ""), wrongValue)
    .map(([value, index, key, item]) => {
      const objects = nodesOf(value).filter((node) => isObject(node.value))
      if (objects.length === 0) return fromValue({ body: value, [key]: item }, `the body wrapped with an extra property ${key}`)
      const node = pick(objects, index)
      // A computed key makes "__proto__" an own property, as JSON.parse on the server does.
      const widened = { [key]: item, ...(node.value as Record<string, unknown>) }
      return fromValue(replaceAt(value, node.path, widened), `an extra property ${JSON.stringify(key)} at ${pointer(node.path)}`)
    })
  const numberLiteral = fc.tuple(validValue, fc.nat(), fc.constantFrom(...NUMBER_LITERALS)).map(([value, index, literal]) => {
    const leaves = nodesOf(value).filter((node) => typeof node.value === "number")
    const node = pick(leaves.length > 0 ? leaves : nodesOf(value), index)
    return fromText(withRawFragment(value, node.path, literal), `the number literal ${literal} at ${pointer(node.path)}`)
  })
  const broken = fc.constantFrom(...BROKEN_BODIES).map((text) => fromText(text, `the body ${JSON.stringify(text)}`))
  const malformed = fc.oneof(wrongType, missing, extra, numberLiteral, broken)

  const oddStrings = fc.tuple(validValue, fc.nat(), oddString, fc.boolean()).map(([value, index, odd, asKey]) => {
    const strings = nodesOf(value).filter((node) => typeof node.value === "string")
    const objects = nodesOf(value).filter((node) => isObject(node.value))
    const recipe = odd.recipe
    // An odd key only where the schema takes keys of any name (metadata): elsewhere it is an
    // unknown property, which "malformed bodies" covers.
    const keyed = asKey && objects.length > 0
      ? (() => {
        const node = pick(objects, index)
        const widened = replaceAt(value, node.path, { ...(node.value as Record<string, unknown>), [odd.value]: "x" })
        return breaks(widened) ? undefined : fromValue(widened, `an odd key ${describeOdd(odd)} at ${pointer(node.path)}`)
      })()
      : undefined
    if (keyed !== undefined) return keyed
    if (strings.length === 0) return fromValue(odd.value, `the body is the string ${describeOdd(odd)}`)
    const node = pick(strings, index)
    return fromValue(
      replaceAt(value, node.path, odd.value),
      `${describeOdd(odd)} at ${pointer(node.path)}`,
      recipe === undefined ? undefined : recipeWith(value, node.path, `JSON.stringify(${recipe})`)
    )
  })

  const deepNesting = fc.tuple(validValue, fc.nat(), deepValue).map(([value, index, deep]) => {
    const node = pick(nodesOf(value), index)
    return fromText(
      withRawFragment(value, node.path, deep.text),
      `${deep.description} at ${pointer(node.path)}`,
      recipeWith(value, node.path, deep.recipe)
    )
  })

  return { valid, malformed, oddStrings, deepNesting }
}

/** A JavaScript expression for the body with `recipe`'s value at `path`. */
const recipeWith = (value: unknown, path: Path, recipe: string): string => {
  const marker = `\u0001recipe\u0001`
  const json = JSON.stringify(replaceAt(value, path, marker))
  const [before, after] = json.split(JSON.stringify(marker))
  return `${JSON.stringify(before)}+${recipe}+${JSON.stringify(after)}`
}

const describeOdd = (odd: { readonly value: string; readonly recipe?: string }) =>
  odd.recipe ?? JSON.stringify(odd.value)
