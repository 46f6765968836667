/**
 * Reading a config source (YAML or JSON text) into a value, keeping where each node sits so
 * that every issue can carry the 1-based line and column of the node it is about
 * (docs/agent-configs.md, "Positions").
 *
 * The `yaml` package parses both formats (JSON is YAML 1.2 flow syntax) and gives the offsets;
 * a JSON source is also read with `JSON.parse`, which is authoritative for what JSON accepts.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml"
import type { Issue } from "../../shared/Errors.ts"
import { findJsonSyntaxError } from "./JsonSyntax.ts"
import { pointerOf } from "../../shared/JsonPointer.ts"

export type SourceFormat = "yaml" | "json"

/** Where in the node an issue points: at the node's value, or at the key that names it. */
export type Anchor = "value" | "key"

export interface ParsedSource {
  readonly value: unknown
  /** The issue for `path`, positioned at the deepest node of the path that exists. */
  readonly issueAt: (path: ReadonlyArray<PropertyKey>, message: string, anchor?: Anchor) => Issue
}

export type ParseResult =
  | { readonly _tag: "Parsed"; readonly source: ParsedSource }
  | { readonly _tag: "SyntaxError"; readonly issues: ReadonlyArray<Issue> }

const position = (lineCounter: LineCounter, offset: number) => {
  const { col, line } = lineCounter.linePos(offset)
  return { line, column: col }
}

export const parseSource = (text: string, format: SourceFormat): ParseResult => {
  const lineCounter = new LineCounter()
  if (format === "json") {
    const error = findJsonSyntaxError(text)
    if (error !== undefined) {
      // The line counter fills as the document parses; a JSON error needs it before that.
      parseDocument(text, { lineCounter })
      return {
        _tag: "SyntaxError",
        issues: [{ path: "", message: `JSON syntax error: ${error.message}`, ...position(lineCounter, error.offset) }]
      }
    }
  }
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, version: "1.2" })
  const syntax = (offset: number, message: string): ParseResult => ({
    _tag: "SyntaxError",
    issues: [{ path: "", message, ...position(lineCounter, offset) }]
  })
  if (doc.errors.length > 0) {
    return {
      _tag: "SyntaxError",
      issues: doc.errors.map((error) => ({
        path: "",
        message: `${format === "json" ? "JSON" : "YAML"} syntax error: ${error.message}`,
        ...position(lineCounter, error.pos[0])
      }))
    }
  }
  let value: unknown
  try {
    value = format === "json" ? JSON.parse(text) : doc.toJS({ maxAliasCount: 100 })
  } catch (error) {
    return syntax(0, `${format === "json" ? "JSON" : "YAML"} error: ${error instanceof Error ? error.message : String(error)}`)
  }

  const root = doc.contents
  const rootOffset = root?.range?.[0] ?? 0

  /** The node at `path` (or its deepest existing ancestor) and, for map entries, the key node. */
  const locate = (path: ReadonlyArray<PropertyKey>, anchor: Anchor): number => {
    let node: unknown = root
    let offset = rootOffset
    for (let i = 0; i < path.length; i++) {
      if (isAlias(node)) node = node.resolve(doc)
      const segment = String(path[i])
      if (isMap(node)) {
        const pair = node.items.find((item) => isPair(item) && keyText(item.key) === segment)
        if (pair === undefined) return offset
        const isLast = i === path.length - 1
        const keyOffset = (pair.key as Node | null)?.range?.[0]
        if (isLast && anchor === "key" && keyOffset !== undefined) return keyOffset
        const valueOffset = (pair.value as Node | null)?.range?.[0]
        if (valueOffset === undefined) return keyOffset ?? offset
        node = pair.value
        offset = valueOffset
      } else if (isSeq(node)) {
        const item = node.items[Number(segment)] as Node | undefined
        const itemOffset = item?.range?.[0]
        if (item === undefined || itemOffset === undefined) return offset
        node = item
        offset = itemOffset
      } else {
        return offset
      }
    }
    return offset
  }

  return {
    _tag: "Parsed",
    source: {
      value,
      issueAt: (path, message, anchor = "value") => ({
        path: pointerOf(path),
        message,
        ...position(lineCounter, locate(path, anchor))
      })
    }
  }
}

const keyText = (key: unknown): string | undefined =>
  isScalar(key) ? String(key.value) : undefined
