/**
 * A conversation's items as a model call is sent them (docs/model-adapters.md, "The request
 * body"). The history cache keeps each recently active agent's ended turns this way, so an item it
 * keeps is not a handful of objects on the heap, which V8 keeps several times over, but its JSON:
 * the items before the last ones appended are kept as one line of JSON each in a ByteLog, read
 * back only by a fold that starts before them (a format's first call for the agent, a
 * compaction), and the last ones appended as objects, which the next call's fold reads. Never
 * changed once made: appending makes new items sharing the bytes.
 */
import { appendAfter, type ByteLog, emptyLog, prefixChunks } from "./ByteLog.ts"
import type { ConversationItem } from "./ModelMessages.ts"

const NEWLINE = "\n"

/** The log of items with no bytes: never appended to (`settledWith` starts a log of its own then). */
const NO_BYTES: ByteLog = emptyLog()

export class ConversationItems {
  /** Its first `byteLength` bytes: the first `written` items, each a line of JSON (which has no raw newline). */
  private readonly log: ByteLog
  private readonly byteLength: number
  private readonly written: number
  /** The items after those. */
  private readonly recent: ReadonlyArray<ConversationItem>

  private constructor(log: ByteLog, byteLength: number, written: number, recent: ReadonlyArray<ConversationItem>) {
    this.log = log
    this.byteLength = byteLength
    this.written = written
    this.recent = recent
  }

  static of(items: ReadonlyArray<ConversationItem>): ConversationItems {
    return new ConversationItems(NO_BYTES, 0, 0, items)
  }

  static readonly empty: ConversationItems = ConversationItems.of([])

  get length(): number {
    return this.written + this.recent.length
  }

  /** The items from `index` on, in order: those kept as JSON are read back (a fold that starts before the last ones appended). */
  from(index: number): ReadonlyArray<ConversationItem> {
    if (index >= this.written) return index === this.written ? this.recent : this.recent.slice(index - this.written)
    const lines = Buffer.concat(prefixChunks(this.log, this.byteLength)).toString("utf8").split(NEWLINE)
    // The bytes end with a newline: the last line is empty.
    return lines.slice(index, this.written).map((line): ConversationItem => JSON.parse(line)).concat(this.recent)
  }

  /** Every item, in order. */
  toArray(): ReadonlyArray<ConversationItem> {
    return this.from(0)
  }

  /** These items, then `more`, as a model call is sent them once: nothing more is written as JSON. */
  then(more: ReadonlyArray<ConversationItem>): ConversationItems {
    return more.length === 0 ? this : new ConversationItems(this.log, this.byteLength, this.written, this.recent.concat(more))
  }

  /**
   * These items, then `more`, to be kept: the items these kept as objects are written as JSON, and
   * `more` kept as objects, for the next call's fold to read.
   */
  settledWith(more: ReadonlyArray<ConversationItem>): ConversationItems {
    if (this.recent.length === 0) return new ConversationItems(this.log, this.byteLength, this.written, more)
    const lines = Buffer.from(this.recent.map((item) => JSON.stringify(item) + NEWLINE).join(""))
    // Items with no bytes yet start a log of their own (`of` and `empty` share theirs).
    const log = appendAfter(this.byteLength === 0 ? emptyLog() : this.log, this.byteLength, lines)
    return new ConversationItems(log, log.written, this.length, more)
  }
}
