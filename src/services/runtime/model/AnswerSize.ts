/**
 * The size of one model answer as it arrives, the one count its bounds are checked against
 * (MAX_MODEL_ANSWER_BYTES, MAX_TOOL_CALLS_PER_ANSWER; docs/model-adapters.md, "Bounds"). Two
 * things add to it: the fold of the answer's events (ResponseFold, ModelMessages.ts), and what a
 * stream decoder holds of items it has begun and not yet made an event of (`PendingItems`: a Chat
 * Completions tool call, whose arguments come in deltas until the stream's end; an Anthropic
 * block, whose input or signature comes in deltas until its stop). Without the second, a tool
 * call's arguments, or many tool calls begun and never finished, were bounded only by the bytes
 * read (64 MiB) and reached the fold, and its bounds, only at the end.
 */
import { MAX_MODEL_ANSWER_BYTES, MAX_TOOL_CALLS_PER_ANSWER } from "./ModelCallLimits.ts"

/**
 * What an item of the answer counts besides its texts: its type, keys and quotes as it is stored
 * (`{"type":"text","text":""}` is 25 bytes; a tool call's event and row more), and what it costs
 * held. Without it an answer of many empty items (blocks begun and never stopped, empty
 * reasoning blocks) counted nothing; with it 8 MiB holds at most 131,072 items.
 */
export const ITEM_BYTES = 64

export class AnswerSize {
  /** The UTF-8 bytes of the answer's texts, and ITEM_BYTES for each of its items. */
  bytes = 0
  /** The tool calls folded or begun. */
  toolCalls = 0

  /** The bound the answer passed, if it did. */
  passed(): "bytes" | "tool calls" | undefined {
    if (this.bytes > MAX_MODEL_ANSWER_BYTES) return "bytes"
    if (this.toolCalls > MAX_TOOL_CALLS_PER_ANSWER) return "tool calls"
    return undefined
  }
}

/** An item a stream decoder has begun: its fields' texts so far. */
type Pending<Field extends string> = { readonly [K in Field]: string }

interface Held<Field extends string> {
  readonly fields: { [K in Field]: string }
  readonly toolCall: boolean
  /** What the item counts in the answer's size, given back when it is taken. */
  bytes: number
}

/**
 * The items a stream decoder has begun and not yet made events of, by the index the provider gives
 * them; what they hold counts in the answer's size as it grows and is given back when an item is
 * taken, since the event made of it is counted by the fold.
 */
export class PendingItems<Field extends string> {
  private readonly held = new Map<number, Held<Field>>()

  private readonly size: AnswerSize

  constructor(size: AnswerSize) {
    this.size = size
  }

  has(index: number) {
    return this.held.has(index)
  }

  /** Begins the item at `index` with `fields` (one begun there before is dropped); `toolCall` counts it as one. */
  begin(index: number, fields: { [K in Field]: string }, toolCall: boolean) {
    this.take(index)
    let bytes = ITEM_BYTES
    for (const field in fields) bytes += Buffer.byteLength(fields[field])
    this.held.set(index, { fields, toolCall, bytes })
    this.size.bytes += bytes
    if (toolCall) this.size.toolCalls++
  }

  /** Adds `text` to the `field` of the item at `index`, if one was begun there (a delta). */
  append(index: number, field: Field, text: string) {
    const held = this.held.get(index)
    if (held === undefined || text === "") return
    const bytes = Buffer.byteLength(text)
    held.fields[field] += text
    held.bytes += bytes
    this.size.bytes += bytes
  }

  /** Replaces the `field` of the item at `index`, if one was begun there. */
  replace(index: number, field: Field, text: string) {
    const held = this.held.get(index)
    if (held === undefined) return
    const bytes = Buffer.byteLength(text) - Buffer.byteLength(held.fields[field])
    held.fields[field] = text
    held.bytes += bytes
    this.size.bytes += bytes
  }

  /** The item at `index`, no longer held. */
  take(index: number): Pending<Field> | undefined {
    const held = this.held.get(index)
    if (held === undefined) return undefined
    this.held.delete(index)
    this.size.bytes -= held.bytes
    if (held.toolCall) this.size.toolCalls--
    return held.fields
  }

  /** Every item, by index, no longer held. */
  takeAll(): Array<Pending<Field>> {
    return [...this.held.keys()].sort((a, b) => a - b).map((index) => this.take(index)!)
  }
}
