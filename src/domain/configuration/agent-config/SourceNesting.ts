/**
 * Where a YAML config source first nests sequences and mappings deeper than a limit, found in
 * one pass over the text, with no recursion and a bounded stack, before the `yaml` package reads
 * it. That package recurses once per level when it composes a document, and its CST parser
 * slows down with depth: a 1 MB source of nested `[` took it seconds and then overflowed the
 * stack. A JSON source is bounded by its own syntax check (JsonSyntax.ts), which runs first.
 *
 * To tell structure from text as the package will, the scan follows its lexer (`yaml` 2.9,
 * `dist/parse/lexer.js`) state for state without producing tokens: what is inside a quoted,
 * plain or block scalar, a comment or a directive is skipped exactly as the lexer takes it. On
 * those tokens it keeps the collections open at each point the way the package's CST parser
 * (`dist/parse/parser.js`) opens and closes them, by the parser's own notion of indentation
 * (spaces and `-`, `?`, `:` indicators that begin a line; a scalar running over several lines
 * does not begin a new one):
 * - `[` and `{` open a flow collection, closed by their bracket, or by a line indented less
 *   than the lexer allows (which ends every flow collection); an entry of a flow sequence that
 *   is a pair (`[a: b]`) holds a mapping, one level more;
 * - a `-` indicator opens a block sequence unless it continues the open one at its indentation;
 *   `?`, `:` or an implicit key (the node before a `:`) open a block mapping unless they are
 *   the next entry of the open one: at its indentation, and with no node or key before them on
 *   their line (as the parser sees lines: a block scalar or a flow collection that became a key
 *   keeps its line open);
 * - the first token of a line closes the block collections indented more than it, and a block
 *   sequence indented as much unless the token is a `-`; a `,` or a closing bracket closes the
 *   block collections inside its flow collection.
 * For a well-formed document the count is the depth of the arrays and objects it stands for (a
 * collection that is the key of a flow pair counts one level less; aliases are not expanded).
 * For a malformed one the parser's error recovery decides, and the count follows it only as far
 * as comparing the two on generated texts went (docs/agent-configs.md, "Issues"): it mostly
 * counts more than the parser builds, and where it counts fewer, the parser took no longer than
 * on other YAML of that size, and findCstTooDeep (below) refuses what it built before the
 * composer, which recurses, reads it.
 */

// Character codes; `at` gives -1 past the end of the text.
const END = -1, TAB = 9, LF = 10, CR = 13, SPACE = 32, BANG = 33, DQUOTE = 34, HASH = 35, PERCENT = 37,
  AMP = 38, SQUOTE = 39, STAR = 42, PLUS = 43, COMMA = 44, DASH = 45, DOT = 46, ZERO = 48, NINE = 57,
  COLON = 58, GT = 62, QUESTION = 63, LBRACKET = 91, BACKSLASH = 92, RBRACKET = 93, LBRACE = 123,
  PIPE = 124, RBRACE = 125, LT = 60, BOM = 0xfeff

/** A character the lexer takes as whitespace, or the end of the text. */
const isEmpty = (c: number) => c === SPACE || c === LF || c === CR || c === TAB || c === END

const isFlowIndicator = (c: number) => c === COMMA || c === LBRACKET || c === RBRACKET || c === LBRACE || c === RBRACE

const charTable = (chars: string) => {
  const table = new Uint8Array(128)
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1
  return table
}
const TAG_CHARS = charTable("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-#;/?:@&=+$_.!~*'()")
const HEX_DIGITS = charTable("0123456789ABCDEFabcdef")
const inTable = (table: Uint8Array, c: number) => c >= 0 && c < 128 && table[c] === 1

/** The lexer's states. */
const STREAM = 0, LINE_START = 1, BLOCK_START = 2, DOC = 3, FLOW = 4

/** Kinds of open collections. */
const FLOW_SEQ = 0, FLOW_MAP = 1, BLOCK_SEQ = 2, BLOCK_MAP = 3

const isFlowKind = (kind: number) => kind === FLOW_SEQ || kind === FLOW_MAP

/**
 * The offset of the first token at which `text` nests collections deeper than `limit` levels,
 * or `undefined` when it never does.
 */
export const findYamlTooDeep = (text: string, limit: number): number | undefined =>
  new YamlNestingScan(text, limit).run()

/** One scan: the lexer's state and the collections open, as fields (no closures made per call). */
class YamlNestingScan {
  private readonly length: number
  constructor(private readonly text: string, private readonly limit: number) {
    this.length = text.length
  }
  private pos = 0
  private state = STREAM

  // The lexer's own state (lexer.js).
  private flowLevel = 0
  private flowKey = false
  private indentNext = 0
  private indentValue = 0
  private blockScalarIndent = -1
  private blockScalarKeep = false

  // The parser's: the indentation of the current line as it counts it, and whether only spaces
  // and indicators have come on the line so far.
  private indent = 0
  private atNewLine = true
  // Whether a node, a `?` or a `:` came on the line: a key after one is never the next entry.
  private afterNode = false
  // Whether the last token was a `:`, or a `-` or `?` that begins the line with no `:` or node
  // before it but such indicators (the parser refuses a `-` after a key): what follows is a value.
  private valuePosition = false
  private colonOnLine = false

  // The open collections, innermost last: kind, indentation, and (flow sequences) whether the
  // current entry is a pair. `pairs` counts those pairs; `flows` the open flow collections.
  private kinds: Array<number> = []
  private indents: Array<number> = []
  private pairEntry: Array<boolean> = []
  // For a flow collection: whether its current entry has had its `:`.
  private entrySep: Array<boolean> = []
  // For a flow collection: whether it started first on its line (as a key, the next entry).
  private startedFirst: Array<boolean> = []
  private pairs = 0
  private flows = 0
  // The next token is the first of a line: it closes the block collections indented more.
  private lineFirst = true
  // The current node (its properties or content) started at this indentation, first on its
  // line (no key before it); a node just ended that a following `:` makes an implicit key.
  private nodeIndent = -1
  private nodeFirst = false
  private keyIndent = -1
  private keyFirst = false
  // Where they start: a collection too deep is reported at its first token.
  private nodeOffset = 0
  private keyOffset = 0
  private tooDeepAt = 0

  private depth() {
    return this.kinds.length + this.pairs
  }
  private top() {
    return this.kinds.length - 1
  }
  private inFlowCollection() {
    return this.kinds.length > 0 && isFlowKind(this.kinds[this.top()])
  }

  private pop() {
    const i = this.top()
    if (this.pairEntry[i]) this.pairs--
    if (isFlowKind(this.kinds[i])) this.flows--
    this.kinds.pop()
    this.indents.pop()
    this.pairEntry.pop()
    this.entrySep.pop()
    this.startedFirst.pop()
  }
  /** False when too deep: `offset` is then where. */
  private push(kind: number, atIndent: number, first: boolean, offset: number): boolean {
    this.kinds.push(kind)
    this.indents.push(atIndent)
    this.pairEntry.push(false)
    this.entrySep.push(false)
    this.startedFirst.push(first)
    if (isFlowKind(kind)) this.flows++
    return this.fits(offset)
  }
  private fits(offset: number) {
    if (this.depth() <= this.limit) return true
    this.tooDeepAt = offset
    return false
  }
  /** Closes the block collections inside the innermost flow collection. */
  private popBlocksInFlow() {
    while (this.kinds.length > 0 && !isFlowKind(this.kinds[this.top()])) this.pop()
  }
  private reset() {
    while (this.kinds.length > 0) this.pop()
    this.nodeIndent = -1
    this.keyIndent = -1
  }

  // Tokens, as the parser takes them.
  private newlineToken() {
    this.indent = 0
    this.atNewLine = true
    this.lineFirst = true
    // The parser forgets the keys of the line at a newline that a block mapping or a node takes,
    // not at one inside a flow collection or after an empty sequence entry.
    if (!(this.inFlowCollection() || (this.kinds.length > 0 && this.kinds[this.top()] === BLOCK_SEQ && this.valuePosition))) {
      this.afterNode = false
      this.valuePosition = false
      this.colonOnLine = false
    }
    this.nodeIndent = -1
    this.keyIndent = -1
  }
  private spaceToken(start: number) {
    if (this.pos > start && this.atNewLine && this.text.charCodeAt(start) === SPACE) this.indent += this.pos - start
  }
  /** Any token but a space, newline or indicator. */
  private otherToken() {
    this.atNewLine = false
  }
  /** The first token of a line closes what is indented more (`isSeqItem`: it is a `-`). */
  private firstOnLine(isSeqItem: boolean) {
    if (!this.lineFirst) return
    this.lineFirst = false
    while (this.kinds.length > 0 && !isFlowKind(this.kinds[this.top()]) && this.indents[this.top()] > this.indent) this.pop()
    if (this.kinds.length > 0 && this.kinds[this.top()] === BLOCK_SEQ && this.indents[this.top()] === this.indent && !isSeqItem) this.pop()
  }
  /** A block mapping has a key at `atIndent`; `first`: no key came before it on its line. False when too deep. */
  private blockMap(atIndent: number, first: boolean, offset: number): boolean {
    if (first && this.kinds.length > 0 && this.kinds[this.top()] === BLOCK_MAP && this.indents[this.top()] === atIndent) return true
    return this.push(BLOCK_MAP, atIndent, false, offset)
  }
  /** A node (properties or content) starts at `pos`. */
  private nodeStart() {
    this.firstOnLine(false)
    if (this.nodeIndent === -1) {
      this.nodeIndent = this.indent
      this.nodeOffset = this.pos
      this.nodeFirst = !this.afterNode
    }
  }
  private nodeEnd() {
    this.afterNode = true
    this.valuePosition = false
    this.keyIndent = this.nodeIndent
    this.keyOffset = this.nodeOffset
    this.keyFirst = this.nodeFirst
    this.nodeIndent = -1
  }
  /** A `-`, `?` or `:` indicator at `pos`. False when too deep. */
  private indicatorToken(c: number): boolean {
    this.firstOnLine(c === DASH)
    const nodeBefore = this.afterNode && !this.valuePosition
    let ok = true
    if (c === DASH) {
      if (!(this.kinds.length > 0 && this.kinds[this.top()] === BLOCK_SEQ && this.indents[this.top()] === this.indent)) ok = this.push(BLOCK_SEQ, this.indent, false, this.pos)
    } else if (this.inFlowCollection()) {
      const i = this.top()
      if (c === COLON && this.entrySep[i] && this.keyIndent !== -1) {
        // A value followed by `:` is the first key of a block mapping inside the entry (an error).
        ok = this.push(BLOCK_MAP, this.keyIndent, false, this.keyOffset)
        this.afterNode = true
      } else {
        this.entrySep[i] = c === COLON
        if (this.kinds[i] === FLOW_SEQ && !this.pairEntry[i]) {
          this.pairEntry[i] = true
          this.pairs++
          ok = this.fits(this.keyIndent !== -1 ? this.keyOffset : this.pos)
        }
      }
    } else if (c === COLON && this.keyIndent !== -1) {
      ok = this.blockMap(this.keyIndent, this.keyFirst, this.keyOffset)
      this.afterNode = true
    } else if (c === COLON && this.nodeIndent !== -1) {
      ok = this.blockMap(this.nodeIndent, this.nodeFirst, this.nodeOffset)
      this.afterNode = true
    } else {
      ok = this.blockMap(this.indent, !this.afterNode, this.pos)
      this.afterNode = true
    }
    this.nodeIndent = -1
    this.keyIndent = -1
    this.valuePosition = c === COLON || (this.atNewLine && !this.colonOnLine && !nodeBefore)
    if (c === COLON) this.colonOnLine = true
    if (this.atNewLine) this.indent += 1
    return ok
  }
  private openFlow(seq: boolean): boolean {
    this.nodeStart()
    const first = this.nodeIndent !== -1 ? this.nodeFirst : !this.afterNode
    this.nodeIndent = -1
    this.valuePosition = false
    this.otherToken()
    this.flowLevel += 1
    return this.push(seq ? FLOW_SEQ : FLOW_MAP, this.indent, first, this.pos)
  }
  private closeFlow() {
    this.firstOnLine(false)
    this.otherToken()
    this.flowLevel -= 1
    if (this.flows === 0) return
    this.popBlocksInFlow()
    const startIndent = this.indents[this.top()]
    const first = this.startedFirst[this.top()]
    this.pop()
    // The collection may be an implicit key, outside a flow collection.
    this.afterNode = true
    this.keyIndent = this.inFlowCollection() ? -1 : startIndent
    this.keyFirst = first
    this.nodeIndent = -1
  }
  private comma() {
    this.firstOnLine(false)
    this.otherToken()
    this.popBlocksInFlow()
    if (this.kinds.length > 0) {
      if (this.pairEntry[this.top()]) this.pairs--
      this.pairEntry[this.top()] = false
      this.entrySep[this.top()] = false
    }
    this.nodeIndent = -1
    this.keyIndent = -1
  }
  /** An unindented line ends every flow collection (an error), and what is open inside them. */
  private endFlows() {
    this.flowLevel = 0
    while (this.flows > 0) this.pop()
    this.afterNode = true
  }

  // The lexer's helpers, on character codes.
  private at(i: number) {
    return i >= 0 && i < this.length ? this.text.charCodeAt(i) : END
  }
  private startsWithMarker(i: number) {
    const c = this.at(i)
    return (c === DASH || c === DOT) && this.at(i + 1) === c && this.at(i + 2) === c && isEmpty(this.at(i + 3))
  }
  // The first "\n" at or after `newlineFrom` is at `newline` (-1: none, -2: not looked for yet).
  // Every search starts at or after the one before, so together they read the text once.
  private newlineFrom = 0
  private newline = -2
  private newlineAtOrAfter(i: number) {
    if (this.newline === -2 || i < this.newlineFrom || (this.newline !== -1 && this.newline < i)) {
      this.newline = this.text.indexOf("\n", i)
    }
    this.newlineFrom = i
    return this.newline
  }
  /** lexer.getLine: where the current line ends (before "\r\n" or "\n"). */
  private lineEnd() {
    const nl = this.newlineAtOrAfter(this.pos)
    if (nl === -1) return this.length
    const end = this.at(nl - 1) === CR ? nl - 1 : nl
    return end < this.pos ? this.pos : end
  }
  /** lexer.pushSpaces, as one space token. */
  private skipSpaces(allowTabs: boolean) {
    const start = this.pos
    let c = this.at(this.pos)
    while (c === SPACE || (allowTabs && c === TAB)) c = this.at(++this.pos)
    this.spaceToken(start)
    return this.pos - start
  }
  /** lexer.pushNewline */
  private skipNewline() {
    const c = this.at(this.pos)
    if (c === LF) {
      this.pos += 1
    } else if (c === CR && this.at(this.pos + 1) === LF) {
      this.pos += 2
    } else {
      return 0
    }
    this.newlineToken()
    return 1
  }
  private atLineEnd() {
    let i = this.pos
    let c = this.at(i)
    while (c === SPACE || c === TAB) c = this.at(++i)
    if (c === END || c === HASH || c === LF) return true
    return c === CR && this.at(i + 1) === LF
  }
  /** lexer.continueScalar: where the next line goes on with the scalar, or -1 where it ends it. */
  private continueScalar(offset: number) {
    let c = this.at(offset)
    if (this.indentNext > 0) {
      let spaces = 0
      while (c === SPACE) c = this.at(++spaces + offset)
      if (c === CR && this.at(spaces + offset + 1) === LF) return offset + spaces + 1
      return c === LF || spaces >= this.indentNext ? offset + spaces : -1
    }
    return this.startsWithMarker(offset) ? -1 : offset
  }
  /** lexer.pushIndicators. False when an indicator goes too deep. */
  private indicators(): boolean {
    while (true) {
      const c = this.at(this.pos)
      if (c === BANG) {
        this.nodeStart()
        this.otherToken()
        this.skipTag()
        this.skipSpaces(true)
      } else if (c === AMP) {
        this.nodeStart()
        this.otherToken()
        this.skipAnchor()
        this.skipSpaces(true)
      } else if (
        (c === DASH || c === QUESTION || c === COLON) &&
        (isEmpty(this.at(this.pos + 1)) || (this.flowLevel > 0 && isFlowIndicator(this.at(this.pos + 1))))
      ) {
        if (this.flowLevel === 0) this.indentNext = this.indentValue + 1
        else if (this.flowKey) this.flowKey = false
        if (!this.indicatorToken(c)) return false
        this.pos += 1
        this.skipSpaces(true)
      } else {
        return true
      }
    }
  }
  /** lexer.pushTag */
  private skipTag() {
    if (this.at(this.pos + 1) === LT) {
      let i = this.pos + 2
      let c = this.at(i)
      while (!isEmpty(c) && c !== GT) c = this.at(++i)
      this.pos = c === GT ? i + 1 : i
      return
    }
    let i = this.pos + 1
    while (true) {
      const c = this.at(i)
      if (inTable(TAG_CHARS, c)) i++
      else if (c === PERCENT && inTable(HEX_DIGITS, this.at(i + 1)) && inTable(HEX_DIGITS, this.at(i + 2))) i += 3
      else break
    }
    this.pos = i
  }
  /** lexer.pushUntil(isNotAnchorChar), for an anchor or an alias. */
  private skipAnchor() {
    let c = this.at(this.pos)
    while (!isEmpty(c) && !isFlowIndicator(c)) c = this.at(++this.pos)
  }
  /** lexer.parseQuotedScalar */
  private quotedScalar() {
    const quote = this.text[this.pos]
    let end = this.text.indexOf(quote, this.pos + 1)
    if (quote === "'") {
      while (end !== -1 && this.at(end + 1) === SQUOTE) end = this.text.indexOf("'", end + 2)
    } else {
      while (end !== -1) {
        let n = 0
        while (this.at(end - 1 - n) === BACKSLASH) n += 1
        if (n % 2 === 0) break
        end = this.text.indexOf("\"", end + 1)
      }
    }
    if (end === -1) {
      this.pos = this.length
      return
    }
    let nl = this.newlineAtOrAfter(this.pos)
    while (nl !== -1 && nl < end) {
      const next = this.continueScalar(nl + 1)
      if (next === -1) {
        // An unindented line ends the scalar there (an error).
        end = nl - (this.at(nl - 1) === CR ? 2 : 1)
        break
      }
      nl = this.newlineAtOrAfter(next)
    }
    if (end + 1 > this.pos) this.pos = end + 1
  }
  /** lexer.parsePlainScalar */
  private plainScalar() {
    const inFlow = this.flowLevel > 0
    let end = this.pos - 1
    let i = this.pos - 1
    let c: number
    while ((c = this.at(++i)) !== END) {
      if (c === COLON) {
        const next = this.at(i + 1)
        if (isEmpty(next) || (inFlow && isFlowIndicator(next))) break
        end = i
      } else if (isEmpty(c)) {
        let next = this.at(i + 1)
        if (c === CR) {
          if (next === LF) {
            i += 1
            c = LF
            next = this.at(i + 1)
          } else {
            end = i
          }
        }
        if (next === HASH || (inFlow && isFlowIndicator(next))) break
        if (c === LF) {
          const next = this.continueScalar(i + 1)
          if (next === -1) break
          i = Math.max(i, next - 2)
        }
      } else {
        if (inFlow && isFlowIndicator(c)) break
        end = i
      }
    }
    if (end + 1 > this.pos) this.pos = end + 1
  }
  /** lexer.parseBlockScalarHeader */
  private blockScalarHeader() {
    this.blockScalarIndent = -1
    this.blockScalarKeep = false
    let i = this.pos
    while (true) {
      const c = this.at(++i)
      if (c === PLUS) this.blockScalarKeep = true
      else if (c > ZERO && c <= NINE) this.blockScalarIndent = c - ZERO - 1
      else if (c !== DASH) break
    }
    let c = this.at(this.pos)
    while (!isEmpty(c) && c !== HASH) c = this.at(++this.pos)
  }
  /** lexer.parseBlockScalar; the parser starts a line after it. */
  private blockScalar() {
    let nl = this.pos - 1
    let first = 0
    loop: for (let i = this.pos; i < this.length; ++i) {
      switch (this.at(i)) {
        case SPACE:
          first += 1
          break
        case LF:
          nl = i
          first = 0
          break
        case CR:
          if (this.at(i + 1) === LF) break
          break loop
        default:
          break loop
      }
    }
    if (first >= this.indentNext) {
      if (this.blockScalarIndent === -1) this.indentNext = first
      else this.indentNext = this.blockScalarIndent + (this.indentNext === 0 ? 1 : this.indentNext)
      do {
        const next = this.continueScalar(nl + 1)
        if (next === -1) break
        nl = this.newlineAtOrAfter(next)
      } while (nl !== -1)
      if (nl === -1) nl = this.length
    }
    let i = nl + 1
    let c = this.at(i)
    while (c === SPACE) c = this.at(++i)
    if (c === TAB) {
      while (c === TAB || c === SPACE || c === CR || c === LF) c = this.at(++i)
      nl = i - 1
    } else if (!this.blockScalarKeep) {
      while (true) {
        let j = nl - 1
        let d = this.at(j)
        if (d === CR) d = this.at(--j)
        const lastChar = j
        while (d === SPACE) d = this.at(--j)
        if (d === LF && j >= this.pos && j + 1 + first > lastChar) nl = j
        else break
      }
    }
    if (nl + 1 > this.pos) this.pos = nl + 1
    this.newlineToken()
  }


  run(): number | undefined {
    while (this.pos < this.length) {
      switch (this.state) {
        case STREAM: {
          // lexer.parseStream
          if (this.at(this.pos) === BOM) {
            this.otherToken()
            this.pos += 1
          }
          if (this.at(this.pos) === PERCENT || this.atLineEnd()) {
            this.pos = this.lineEnd()
            if (this.skipNewline() === 0 && this.pos < this.length) this.pos += 1
            break
          }
          this.reset()
          this.state = LINE_START
          break
        }
        case LINE_START: {
          // lexer.parseLineStart
          if (this.startsWithMarker(this.pos)) {
            const docStart = this.at(this.pos) === DASH
            this.pos += 3
            this.indentValue = 0
            this.indentNext = 0
            this.reset()
            this.otherToken()
            this.state = docStart ? DOC : STREAM
            break
          }
          this.indentValue = this.skipSpaces(false)
          if (this.indentNext > this.indentValue && !isEmpty(this.at(this.pos + 1))) this.indentNext = this.indentValue
          this.state = BLOCK_START
          break
        }
        case BLOCK_START: {
          // lexer.parseBlockStart
          const c = this.at(this.pos)
          if ((c === DASH || c === QUESTION || c === COLON) && isEmpty(this.at(this.pos + 1))) {
            if (!this.indicatorToken(c)) return this.tooDeepAt
            this.pos += 1
            const spaces = this.skipSpaces(true)
            this.indentNext = this.indentValue + 1
            this.indentValue += 1 + spaces
          } else {
            this.state = DOC
          }
          break
        }
        case DOC: {
          // lexer.parseDocument
          this.skipSpaces(true)
          if (!this.indicators()) return this.tooDeepAt
          const end = this.lineEnd()
          const c = this.pos < end ? this.at(this.pos) : END
          switch (c) {
            case HASH:
            case END:
              // A comment, then the end of the line.
              if (c === HASH) {
                this.otherToken()
                this.pos = end
              }
              this.skipNewline()
              this.state = LINE_START
              break
            case LBRACE:
            case LBRACKET:
              if (!this.openFlow(c === LBRACKET)) return this.tooDeepAt
              this.pos += 1
              this.flowKey = false
              this.state = FLOW
              break
            case RBRACE:
            case RBRACKET:
              // An error: no flow collection is open.
              this.firstOnLine(false)
              this.otherToken()
              this.pos += 1
              break
            case STAR:
              this.nodeStart()
              this.otherToken()
              this.skipAnchor()
              this.nodeEnd()
              break
            case DQUOTE:
            case SQUOTE:
              this.nodeStart()
              this.otherToken()
              this.quotedScalar()
              this.nodeEnd()
              break
            case PIPE:
            case GT: {
              this.nodeStart()
              // A block scalar is a value right after a `:`, or a `-` or `?` that begins its line, or
              // first on its line unless at a block mapping's indentation. Elsewhere (an error) the
              // parser may take it as a key, and a node after it, on the next line, as its value.
              const isValue = this.valuePosition ||
                (this.nodeFirst && !(this.kinds.length > 0 && this.kinds[this.top()] === BLOCK_MAP && this.indents[this.top()] === this.nodeIndent))
              this.otherToken()
              this.blockScalarHeader()
              this.skipSpaces(true)
              this.pos = this.lineEnd()
              this.skipNewline()
              this.blockScalar()
              this.afterNode = !isValue
              this.state = LINE_START
              break
            }
            default:
              this.nodeStart()
              this.otherToken()
              this.plainScalar()
              this.nodeEnd()
          }
          break
        }
        case FLOW: {
          // lexer.parseFlowCollection
          let lineIndent = -1
          while (true) {
            const nl = this.skipNewline()
            let spaces = 0
            if (nl > 0) {
              spaces = this.skipSpaces(false)
              this.indentValue = lineIndent = spaces
            }
            spaces += this.skipSpaces(true)
            if (nl + spaces === 0) break
          }
          if (this.pos >= this.length) break
          if (
            (lineIndent !== -1 && lineIndent < this.indentNext && this.at(this.pos) !== HASH) ||
            (lineIndent === 0 && this.startsWithMarker(this.pos))
          ) {
            const atFlowEndMarker = lineIndent === this.indentNext - 1 && this.flowLevel === 1 &&
              (this.at(this.pos) === RBRACKET || this.at(this.pos) === RBRACE)
            if (!atFlowEndMarker) {
              this.endFlows()
              this.state = LINE_START
              break
            }
          }
          const end = this.lineEnd()
          while (this.pos < end && this.at(this.pos) === COMMA) {
            this.comma()
            this.pos += 1
            this.skipSpaces(true)
            this.flowKey = false
          }
          if (!this.indicators()) return this.tooDeepAt
          const c = this.pos < end ? this.at(this.pos) : END
          switch (c) {
            case END:
              break
            case HASH:
              this.otherToken()
              this.pos = end
              break
            case LBRACE:
            case LBRACKET:
              if (!this.openFlow(c === LBRACKET)) return this.tooDeepAt
              this.pos += 1
              this.flowKey = false
              break
            case RBRACE:
            case RBRACKET:
              this.closeFlow()
              this.pos += 1
              this.flowKey = true
              if (this.flowLevel === 0) this.state = DOC
              break
            case STAR:
              this.nodeStart()
              this.otherToken()
              this.skipAnchor()
              this.nodeEnd()
              break
            case DQUOTE:
            case SQUOTE:
              this.nodeStart()
              this.otherToken()
              this.flowKey = true
              this.quotedScalar()
              this.nodeEnd()
              break
            case COLON: {
              const next = this.at(this.pos + 1)
              if (this.flowKey || isEmpty(next) || next === COMMA) {
                this.flowKey = false
                if (!this.indicatorToken(COLON)) return this.tooDeepAt
                this.pos += 1
                this.skipSpaces(true)
                break
              }
              this.nodeStart()
              this.otherToken()
              this.flowKey = false
              this.plainScalar()
              this.nodeEnd()
              break
            }
            default:
              this.nodeStart()
              this.otherToken()
              this.flowKey = false
              this.plainScalar()
              this.nodeEnd()
          }
          break
        }
      }
    }
    return undefined
  }
}

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

/**
 * The offset of the first collection of a parsed CST (the `yaml` package's `Parser` tokens)
 * nested deeper than `limit` levels, a pair in a flow sequence counting as a mapping, or
 * `undefined`. Walked with a stack, not recursion, over every place the parser puts a node,
 * error recovery included (a document's value, an item's key and value, a block scalar's
 * props), so linear in the size of the CST. The package's composer recurses once per level of
 * the CST: this bounds it whatever the parser built, including the malformed texts where
 * findYamlTooDeep counts fewer levels than the parser nests.
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
