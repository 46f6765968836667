/**
 * Reading a config source (YAML or JSON text) into a value, keeping where each node sits so
 * that every issue can carry the 1-based line and column of the node it is about
 * (docs/agent-configs.md, "Positions").
 *
 * The `yaml` package parses both formats (JSON is YAML 1.2 flow syntax) and gives the offsets;
 * a JSON source is also read with `JSON.parse`, which is authoritative for what JSON accepts.
 * Both recurse once per level of nesting, so a source gets to them only once a linear check
 * has found it nested no deeper than MAX_NESTING_DEPTH: JsonSyntax.ts for JSON, before any
 * parse; for YAML, SourceLimits.ts, which stops the `yaml` package's parser (whose time grows
 * with depth) at the first level too deep, and checks what it parsed before its composer, which
 * recurses. A source deeper than that is a syntax error at the point where it goes too deep;
 * one with more tokens or aliases than SOURCE_LIMITS allows is refused at the first token past
 * the limit, by the same pass, so that no source holds the server's thread for more than a fraction of a second.
 */
import {
  type Alias,
  Composer,
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  type Pair,
  type YAMLMap,
  YAMLParseError
} from "yaml"
import type { Issue } from "../../shared/Errors.ts"
import { findJsonSyntaxError } from "./JsonSyntax.ts"
import { pointerOf } from "../../shared/JsonPointer.ts"
import { findCstTooDeep, type LimitExceeded, parseYamlCst, SOURCE_LIMITS } from "./SourceLimits.ts"

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

/** The 1-based line and column (in UTF-16 code units) of `offset`, counted as LineCounter counts them: lines end at "\n". */
const positionIn = (text: string, offset: number) => {
  let line = 1
  let lineStart = 0
  for (let newline = text.indexOf("\n"); newline !== -1 && newline < offset; newline = text.indexOf("\n", newline + 1)) {
    line++
    lineStart = newline + 1
  }
  return { line, column: offset - lineStart + 1 }
}

/** The `yaml` package's Parser tokens of a source, as parseYamlCst gives them. */
type Tokens = ReadonlyArray<Parameters<Composer["next"]>[0]>

/** The `yaml` package's parseDocument, from the tokens its Parser gave (so they can be checked first). */
const composeDocument = (tokens: Tokens, length: number) => {
  // Duplicate keys are found by duplicateKeyErrors: the package's own check (`uniqueKeys`)
  // compares each key with every earlier one of its map, which is quadratic (32,000 keys: 12 s).
  // Without `resolveKnownTags`, the tags of YAML 1.1's types (`!!binary`, `!!timestamp`, `!!set`,
  // `!!omap`, `!!pairs`) are unresolved like any other tag outside the core schema (tagErrors).
  const composer = new Composer({ prettyErrors: false, resolveKnownTags: false, uniqueKeys: false, version: "1.2" })
  let doc: Document.Parsed | undefined
  for (const next of composer.compose(tokens, true, length)) {
    if (doc === undefined) {
      doc = next
    } else {
      doc.errors.push(
        new YAMLParseError(
          [next.range[0], next.range[1]],
          "MULTIPLE_DOCS",
          "Source contains multiple documents; please use YAML.parseAllDocuments()"
        )
      )
      break
    }
  }
  // compose(tokens, true) always ends with a document.
  doc!.errors.push(...duplicateKeyErrors(doc!), ...tagErrors(doc!))
  return doc!
}

/** The tags of the YAML 1.2 core schema, the only ones a source may use (besides the non-specific `!`). */
const CORE_TAGS = ["str", "int", "float", "bool", "null", "seq", "map"].map((name) => `tag:yaml.org,2002:${name}`)

/**
 * An error at each tag the package could not resolve, which it reports as a warning and then
 * drops, keeping the value untagged (`instruction: !!js/function "x"` would be the string "x"):
 * a tag outside the core schema (`!!js/function`, `!local`, `!!binary`), or a core tag its value
 * does not fit (`!!int x`, `!!map x`). The config would not be what its source says.
 */
const tagErrors = (doc: Document.Parsed): ReadonlyArray<YAMLParseError> =>
  doc.warnings.filter((warning) => warning.code === "TAG_RESOLVE_FAILED").map((warning) => {
    const tag = /^Unresolved tag: (.*)$/.exec(warning.message)?.[1]
    const message = tag === undefined
      ? warning.message
      : CORE_TAGS.includes(tag)
      ? `the value does not fit its tag ${tag.replace("tag:yaml.org,2002:", "!!")}; remove the tag or change the value`
      : `the tag ${tag.replace(/^tag:yaml\.org,2002:/, "!!")} is not supported (only the core tags ` +
        "!!str, !!int, !!float, !!bool, !!null, !!seq and !!map are); remove it"
    return new YAMLParseError(warning.pos, "TAG_RESOLVE_FAILED", message)
  })

/**
 * A `DUPLICATE_KEY` error, as the package's `uniqueKeys` reports it, at each key equal to an
 * earlier key of its map (scalars equal by value; a collection as a key is equal to no other),
 * found in linear time: one set of keys per map, the document walked with a stack.
 */
const duplicateKeyErrors = (doc: Document.Parsed): ReadonlyArray<YAMLParseError> => {
  const errors: Array<YAMLParseError> = []
  const pending: Array<unknown> = [doc.contents]
  while (pending.length > 0) {
    const node = pending.pop()
    if (isSeq(node)) {
      for (const item of node.items) pending.push(item)
    } else if (isMap(node)) {
      const keys = new Set<unknown>()
      for (const { key, value } of node.items) {
        if (isScalar(key) && !Number.isNaN(key.value)) {
          if (keys.has(key.value)) {
            const offset = key.range?.[0] ?? 0
            errors.push(new YAMLParseError([offset, offset + 1], "DUPLICATE_KEY", "Map keys must be unique"))
          }
          keys.add(key.value)
        }
        pending.push(key, value)
      }
    }
  }
  return errors.sort((a, b) => a.pos[0] - b.pos[0])
}

type SyntaxErrorResult = Extract<ParseResult, { readonly _tag: "SyntaxError" }>

const syntaxError = (message: string, at: { readonly line: number; readonly column: number }): SyntaxErrorResult => ({
  _tag: "SyntaxError",
  issues: [{ path: "", message, ...at }]
})

const TOO_DEEP = `YAML syntax error: sequences and mappings nest deeper than ${SOURCE_LIMITS.depth} levels`

const OVER_LIMIT: Record<LimitExceeded["exceeded"], string> = {
  depth: TOO_DEEP,
  tokens: `the source has more than ${SOURCE_LIMITS.tokens.toLocaleString("en-US")} tokens ` +
    `(scalars, indicators, brackets, commas, comments, line breaks and runs of spaces); ` +
    `make it shorter; long text in a block scalar (|) is a few tokens however long`,
  aliases: `the source has more than ${SOURCE_LIMITS.aliases} aliases (*name); write the values out`
}

/**
 * The source's tokens, read by the linear checks that run before any parser that recurses
 * (JSON syntax, nesting depth, token and alias counts), or the first error one of them found.
 * `lineCounter` is given every line start the tokenizer reads.
 */
const readTokens = (
  text: string,
  format: SourceFormat,
  lineCounter: LineCounter
): { readonly _tag: "Tokens"; readonly tokens: Tokens } | SyntaxErrorResult => {
  // Before any parse: the offset of an error is positioned by counting lines, no parser needed.
  if (format === "json") {
    const error = findJsonSyntaxError(text)
    if (error !== undefined) return syntaxError(`JSON syntax error: ${error.message}`, positionIn(text, error.offset))
  }
  let tokens: Tokens
  try {
    const parsed = parseYamlCst(text, SOURCE_LIMITS, lineCounter.addNewLine)
    if ("exceeded" in parsed) return syntaxError(OVER_LIMIT[parsed.exceeded], positionIn(text, parsed.at))
    tokens = parsed.tokens
  } catch (error) {
    // The parser recurses once per level it closes at once, and overflows the stack on a text
    // nested some thousands deep (20,000 levels of `- ` closed by one line, were it not stopped
    // at the 65th). Should a text the check lets through still do it, it is reported at the last
    // line the parser read rather than thrown (a 500).
    if (!(error instanceof RangeError)) throw error
    const lineStarts = lineCounter.lineStarts
    return syntaxError(TOO_DEEP, positionIn(text, lineStarts.length > 0 ? lineStarts[lineStarts.length - 1] : 0))
  }
  const cstTooDeep = findCstTooDeep(tokens, SOURCE_LIMITS.depth)
  if (cstTooDeep !== undefined) return syntaxError(TOO_DEEP, position(lineCounter, cstTooDeep))
  return { _tag: "Tokens", tokens }
}

/**
 * The value of a composed document: for JSON, as `JSON.parse` reads the text; for YAML, as the
 * package converts it (aliases expanded, at most 100 of them). A document with errors, or one
 * whose conversion throws, is a syntax error.
 */
const documentValue = (
  doc: Document.Parsed,
  text: string,
  format: SourceFormat,
  lineCounter: LineCounter
): { readonly _tag: "Value"; readonly value: unknown } | SyntaxErrorResult => {
  const language = format === "json" ? "JSON" : "YAML"
  if (doc.errors.length > 0) {
    return {
      _tag: "SyntaxError",
      issues: doc.errors.map((error) => ({
        path: "",
        message: `${language} syntax error: ${error.message}`,
        ...position(lineCounter, error.pos[0])
      }))
    }
  }
  try {
    return { _tag: "Value", value: format === "json" ? JSON.parse(text) : doc.toJS({ maxAliasCount: 100 }) }
  } catch (error) {
    return syntaxError(
      `${language} error: ${error instanceof Error ? error.message : String(error)}`,
      position(lineCounter, 0)
    )
  }
}

/**
 * The offset of the node at a path in `doc` (or of its deepest existing ancestor) and, for map
 * entries with the "key" anchor, of the key node. Maps are indexed and aliases resolved only
 * when an issue first looks into them.
 */
const nodeOffsets = (doc: Document.Parsed) => {
  const root = doc.contents
  const rootOffset = root?.range?.[0] ?? 0

  /** Each map's first pair of each key text. */
  const pairsByKey = new Map<YAMLMap, Map<string, Pair>>()
  const pairNamed = (map: YAMLMap, key: string): Pair | undefined => {
    let pairs = pairsByKey.get(map)
    if (pairs === undefined) {
      pairs = new Map()
      for (const pair of map.items) {
        const text = keyText(pair.key)
        if (text !== undefined && !pairs.has(text)) pairs.set(text, pair)
      }
      pairsByKey.set(map, pairs)
    }
    return pairs.get(key)
  }

  /** What each alias stands for: the package looks through the whole document for each resolution. */
  const aliasTargets = new Map<Alias, unknown>()
  const resolved = (alias: Alias): unknown => {
    if (!aliasTargets.has(alias)) aliasTargets.set(alias, alias.resolve(doc))
    return aliasTargets.get(alias)
  }

  return (path: ReadonlyArray<PropertyKey>, anchor: Anchor): number => {
    let node: unknown = root
    let offset = rootOffset
    for (let i = 0; i < path.length; i++) {
      if (isAlias(node)) node = resolved(node)
      const segment = String(path[i])
      if (isMap(node)) {
        const pair = pairNamed(node, segment)
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
}

export const parseSource = (text: string, format: SourceFormat): ParseResult => {
  const lineCounter = new LineCounter()
  const read = readTokens(text, format, lineCounter)
  if (read._tag === "SyntaxError") return read
  const doc = composeDocument(read.tokens, text.length)
  const converted = documentValue(doc, text, format, lineCounter)
  if (converted._tag === "SyntaxError") return converted
  const locate = nodeOffsets(doc)
  return {
    _tag: "Parsed",
    source: {
      value: converted.value,
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
