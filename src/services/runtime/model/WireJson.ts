/**
 * The request body's JSON, written from parts kept between calls (docs/model-adapters.md, "The
 * request body"). A model call sends the whole conversation every time. The ended turns' items
 * (TurnHistory keeps them, as ConversationItems) stay the same until a turn ends, when the next
 * ones are made from them by appending the ended turn's items (Conversation.ts marks them so,
 * `appendedTo`). So each format keeps, per ConversationItems, how far its fold over the items got
 * (`keptFold`: the bytes of the JSON written so far, and what the next item may still join, an
 * open message), and a call folds only what is new since the items it extends: the turn that just
 * ended and the running turn's items, not every item of the past again. An item's JSON is written
 * when the fold reaches it and kept only as those bytes.
 */
import { appendAfter, type ByteLog, emptyLog, prefixChunks } from "./ByteLog.ts"
import type { ConversationItems } from "./ConversationItems.ts"
import type { ConversationItem } from "./ModelMessages.ts"

/** Items made from others by appending: the others, until a fold over the items was kept. */
const extending = new WeakMap<ConversationItems, ConversationItems>()

/**
 * Marks `items` as `base` with items appended, so that a fold over `items` resumes where the one
 * kept for `base` ended. `settled` when `items` replaces `base` as an agent's settled items: then
 * a `base` never folded is skipped for the items it extends, so that the newest items never keep
 * a chain of older ones alive.
 */
export const appendedTo = (items: ConversationItems, base: ConversationItems, settled: boolean) => {
  if (items !== base) extending.set(items, settled ? extending.get(base) ?? base : base)
}

/** A fold over a conversation's items that can be resumed from a copy of its state. */
export interface ItemFold<S> {
  readonly start: () => S
  /** A state to fold more items into, leaving `state` as it was. */
  readonly copy: (state: S) => S
  /** Folds one more item into `state`. */
  readonly step: (state: S, item: ConversationItem) => void
  /**
   * Makes a kept state cheap to copy, without changing what it stands for: called on the state of
   * an array before a fold over a longer one resumes from it (once a turn for an agent's settled
   * items), never on a call's own array, whose state is used once.
   */
  readonly settle: (state: S) => void
}

/**
 * `fold` over a conversation's items, kept per ConversationItems: items marked as others with
 * items appended (`appendedTo`) fold only those, from a copy of the others' state.
 */
export const keptFold = <S>(fold: ItemFold<S>): (items: ConversationItems) => S => {
  const kept = new WeakMap<ConversationItems, S>()
  const settled = (state: S) => {
    fold.settle(state)
    return state
  }
  const stateOf = (items: ConversationItems): S => {
    const known = kept.get(items)
    if (known !== undefined) return known
    const base = extending.get(items)
    const state = base === undefined ? fold.start() : fold.copy(settled(stateOf(base)))
    for (const item of items.from(base === undefined ? 0 : base.length)) fold.step(state, item)
    extending.delete(items)
    kept.set(items, state)
    return state
  }
  return stateOf
}

const COMMA = Buffer.from(",")

/**
 * The elements of a JSON array being written: those written before the last `settle` as UTF-8
 * bytes (the first `length` of a ByteLog, which never change), the newer ones as text.
 */
export class JsonElements {
  private log: ByteLog
  private length: number
  private readonly texts: Array<string>

  private constructor(log: ByteLog, length: number, texts: Array<string>) {
    this.log = log
    this.length = length
    this.texts = texts
  }

  static empty(): JsonElements {
    return new JsonElements(emptyLog(), 0, [])
  }

  push(json: string): void {
    this.texts.push(json)
  }

  copy(): JsonElements {
    return new JsonElements(this.log, this.length, [...this.texts])
  }

  /**
   * Writes the newer elements after the bytes (JSON text never splits a surrogate pair), in place
   * when no other state's bytes go on past this one's, else into a log of its own that shares the
   * chunks holding its bytes: appending a turn at a time costs what the turn writes.
   */
  settle(): void {
    if (this.texts.length === 0) return
    const bytes = Buffer.from(`${this.length === 0 ? "" : ","}${this.texts.join(",")}`)
    this.texts.length = 0
    this.log = appendAfter(this.log, this.length, bytes)
    this.length = this.log.written
  }

  /** `first` if given, the elements, then `more`, comma-separated, as UTF-8 chunks. */
  chunks(more: ReadonlyArray<string>, first?: string): Array<Buffer> {
    const texts = more.length === 0 ? this.texts : [...this.texts, ...more]
    const chunks: Array<Buffer> = first === undefined ? [] : [Buffer.from(first)]
    const settled = prefixChunks(this.log, this.length)
    if (settled.length > 0) {
      if (chunks.length > 0) chunks.push(COMMA)
      chunks.push(...settled)
    }
    if (texts.length > 0) {
      if (chunks.length > 0) chunks.push(COMMA)
      chunks.push(Buffer.from(texts.join(",")))
    }
    return chunks
  }
}

const ARRAY_AND_OBJECT_END = Buffer.from("]}")

/** An object's JSON text up to the value of one more field, written last. */
const withFieldOpened = (objectJson: string, key: string): string =>
  `${objectJson === "{}" ? "{" : `${objectJson.slice(0, -1)},`}${JSON.stringify(key)}:`

/**
 * `JSON.stringify({ ...fields, [key]: elements })` as UTF-8 chunks, sent one after the other (the
 * past's bytes are not copied into one buffer), where `elements` are the array's elements already
 * written (JsonElements.chunks).
 */
export const jsonWithArray = (
  fields: Readonly<Record<string, unknown>>,
  key: string,
  elements: ReadonlyArray<Buffer>
): Array<Buffer> => [Buffer.from(`${withFieldOpened(JSON.stringify(fields), key)}[`), ...elements, ARRAY_AND_OBJECT_END]

/** An object's JSON text with one more field, written last. */
export const withField = (objectJson: string, key: string, value: unknown): string =>
  `${withFieldOpened(objectJson, key)}${JSON.stringify(value)}}`
