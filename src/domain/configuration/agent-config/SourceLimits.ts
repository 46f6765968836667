/**
 * The limits a config source is read within, found before the `yaml` package builds its
 * document (docs/agent-configs.md, "Issues"): how deep it nests sequences and mappings, and how
 * many tokens it has. That package recurses once per level when it composes a document, and its
 * CST parser slows down with depth and recurses when it closes many levels at once: a 1 MB source
 * of nested `[` took it seconds and then overflowed the stack. Its lexer and parser cost 1 to
 * 3 µs a token, and its composer and the definition's check more a node: a 1 MB source of line
 * breaks, commas or empty items held the server's one thread for 1 to 3 s. A JSON source is
 * bounded in depth by its own syntax check (JsonSyntax.ts), which runs first; the token count
 * bounds both formats (JSON is read by the same lexer).
 *
 * parseYamlCst does not mirror the package's lexer or parser: it
 * runs them, the package's own `Lexer` feeding its `Parser` one token at a time, and stops at the
 * first token past its token or alias limit, or the first after which
 * the collections the parser holds open nest deeper than the limit. The parser keeps the open
 * nodes as a stack (document, collections, the scalar being read), so the levels open are the
 * collections on that stack, plus one for an entry of a flow sequence that is a pair (`[a: b]`
 * holds a mapping). As it stops at the first level over the limit, the parser never holds
 * more than that many levels: each token costs it bounded time and bounded recursion, and the
 * whole pass is linear in the text. The count is the parser's, error recovery included, so for
 * a well-formed document it is the depth of the arrays and objects it stands for (a collection
 * that is the key of a flow pair counts one level less, being read before its `:`; aliases are
 * not expanded). Error recovery can still wrap a node already closed into a new collection (a
 * flow collection that turns out to be a key), which the stack does not show: findCstTooDeep
 * (below) checks what the parser built before the composer, which recurses, reads it.
 */
import { type CST, Lexer, Parser } from "yaml"
import { MAX_NESTING_DEPTH } from "../../shared/Nesting.ts"

interface CstNode {
  readonly type?: unknown
  readonly offset?: unknown
  readonly start?: unknown
  readonly value?: unknown
  readonly key?: unknown
  readonly items?: unknown
  readonly props?: unknown
  readonly sep?: unknown
}

const isCollection = (type: unknown) => type === "block-map" || type === "block-seq" || type === "flow-collection"

/** How much of a source the `yaml` package is let read (docs/agent-configs.md, "Issues"). */
export interface SourceLimits {
  /** How deep sequences and mappings may nest (the document is level 1). */
  readonly depth: number
  /**
   * How many of the lexer's tokens a source may have: each scalar (a plain one is two: a marker
   * and its text), indicator, bracket, comma, anchor, alias, tag, comment, line break and run of
   * spaces counts one; a block scalar (`|`, `>`) is four however long.
   */
  readonly tokens: number
  /**
   * How many aliases (`*name`) a source may have. The package resolves each alias by a look
   * through every anchor and alias before it, and counts what an anchored collection holds by
   * walking the whole document for each alias in it: a 117 KB source of 20,000 aliases took it
   * 34 s to refuse ("Excessive alias count"), before any limit of its own applied.
   */
  readonly aliases: number
}

/**
 * The limits of a config source: 64 levels, as request bodies; 100,000 tokens, about 12,000
 * lines of YAML (a line `  key: value` is eight) or 30,000 of pretty-printed JSON, which the
 * package reads in 100 to 300 ms; 100 aliases, so that resolving them costs at most about as much.
 */
export const SOURCE_LIMITS: SourceLimits = { depth: MAX_NESTING_DEPTH, tokens: 100_000, aliases: 100 }

/** A source over one of its limits, and the offset of the token where it went over it. */
export interface LimitExceeded {
  readonly exceeded: keyof SourceLimits
  readonly at: number
}

/** The lexer's mark before the text of a scalar, which is the next token. */
const SCALAR_MARK = "\x1f"

/**
 * The `yaml` package's CST of `text` (what `new Parser(onNewLine).parse(text)` yields), or, as
 * soon as the source goes over one of `limits`, which and where: for depth, the first token of
 * the collection over the limit; for tokens and aliases, the first token past the limit. The
 * text after it is left unread.
 */
export const parseYamlCst = (
  text: string,
  limits: SourceLimits,
  onNewLine?: (offset: number) => void
): { readonly tokens: ReadonlyArray<CST.Token> } | LimitExceeded => {
  const parser = new Parser(onNewLine)
  onNewLine?.(0)
  const tokens: Array<CST.Token> = []
  let count = 0
  let aliases = 0
  let previous = ""
  // The package's own way to drive its parser from a lexer (parser.d.ts), with a look at the
  // open nodes (`stack`, public) after each token.
  for (const lexeme of new Lexer().lex(text)) {
    if (++count > limits.tokens) return { exceeded: "tokens", at: parser.offset }
    // An alias is a token of its own beginning with `*`; a scalar's text that does follows its mark.
    if (lexeme.charCodeAt(0) === 42 && previous !== SCALAR_MARK && ++aliases > limits.aliases) {
      return { exceeded: "aliases", at: parser.offset }
    }
    previous = lexeme
    for (const token of parser.next(lexeme)) tokens.push(token)
    // A level is a collection on the stack or a pair inside one: the stack holds more than
    // `limits.depth` levels only once it is longer than half that.
    if (2 * parser.stack.length > limits.depth) {
      const tooDeepAt = openTooDeep(parser.stack, limits.depth)
      if (tooDeepAt !== undefined) return { exceeded: "depth", at: tooDeepAt }
    }
  }
  for (const token of parser.end()) tokens.push(token)
  return { tokens }
}

/** Where the first of the open `nodes` (outermost first) that goes over `limit` levels starts. */
const openTooDeep = (nodes: ReadonlyArray<CstNode>, limit: number): number | undefined => {
  let depth = 0
  for (const node of nodes) {
    if (!isCollection(node.type)) continue
    if (++depth > limit) return node.offset as number
    if (node.type !== "flow-collection" || (node.start as CstNode).type !== "flow-seq-start") continue
    const items = node.items as ReadonlyArray<CstNode>
    const entry = items[items.length - 1]
    if (entry !== undefined && isFlowPair(entry) && ++depth > limit) return pairOffset(entry) ?? (node.offset as number)
  }
  return undefined
}

/**
 * The offset of the first collection of a parsed CST (the `yaml` package's `Parser` tokens)
 * nested deeper than `limit` levels, a pair in a flow sequence counting as a mapping, or
 * `undefined`. Walked with a stack, not recursion, over every place the parser puts a node,
 * error recovery included (a document's value, an item's key and value, a block scalar's
 * props), so linear in the size of the CST. The package's composer recurses once per level of
 * the CST: this bounds it whatever the parser built, including the nodes its error recovery
 * moved into a new collection after parseYamlCst saw them.
 */
export const findCstTooDeep = (tokens: ReadonlyArray<unknown>, limit: number): number | undefined => {
  const pending: Array<unknown> = []
  const depths: Array<number> = []
  const add = (node: unknown, depth: number) => {
    if (typeof node === "object" && node !== null) {
      pending.push(node)
      depths.push(depth)
    }
  }
  for (const token of tokens) add(token, 0)
  while (pending.length > 0) {
    const node = pending.pop() as CstNode
    let depth = depths.pop()!
    if (isCollection(node.type)) {
      depth += 1
      if (depth > limit) return typeof node.offset === "number" ? node.offset : 0
    }
    add(node.value, depth)
    add(node.key, depth)
    if (Array.isArray(node.props)) for (const prop of node.props) add(prop, depth)
    if (!Array.isArray(node.items)) continue
    const flowSeq = node.type === "flow-collection" && (node.start as CstNode | undefined)?.type === "flow-seq-start"
    for (const item of node.items) {
      if (flowSeq && isFlowPair(item)) {
        if (depth + 1 > limit) return itemOffset(item) ?? (node.offset as number)
        add(item, depth + 1)
      } else {
        add(item, depth)
      }
    }
  }
  return undefined
}

/** An entry of a flow collection that is a pair: it has a `:`, or begins with `?`. */
const isFlowPair = (item: unknown): boolean => {
  const { sep, start } = item as CstNode
  return (Array.isArray(sep) && sep.some((token: CstNode) => token?.type === "map-value-ind")) ||
    (Array.isArray(start) && start.some((token: CstNode) => token?.type === "explicit-key-ind"))
}

const itemOffset = (item: unknown): number | undefined => {
  const { key, start } = item as CstNode
  const keyOffset = (key as CstNode | null | undefined)?.offset
  if (typeof keyOffset === "number") return keyOffset
  const first = Array.isArray(start) ? (start[0] as CstNode | undefined)?.offset : undefined
  return typeof first === "number" ? first : undefined
}

/** Where an open pair of a flow sequence starts: its key, else its `?` or `:`. */
const pairOffset = (item: CstNode): number | undefined => {
  const keyOffset = (item.key as CstNode | null | undefined)?.offset
  if (typeof keyOffset === "number") return keyOffset
  const indicators = [...(item.start as Array<CstNode>), ...((item.sep as Array<CstNode> | undefined) ?? [])]
  const indicator = indicators.find((token) => token.type === "explicit-key-ind" || token.type === "map-value-ind")
  return typeof indicator?.offset === "number" ? indicator.offset : undefined
}
