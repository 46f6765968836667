/**
 * The request body's JSON, written from parts kept between calls (docs/model-adapters.md, "The
 * request body"). A model call sends the whole conversation every time. The array of the ended
 * turns' items (TurnHistory keeps it) stays the same until a turn ends, when the next one is made
 * from it by appending the ended turn's items (Conversation.ts marks it so, `appendedTo`). So each
 * format keeps, per array, how far its fold over the items got (`keptFold`: the bytes of the JSON
 * written so far, and what the next item may still join, an open message), and a call folds only
 * what is new since the array it extends: the turn that just ended and the running turn's items,
 * not every item of the past again. An item's JSON is written when the fold reaches it and kept
 * only as those bytes.
 */
import type { ConversationItem } from "./ModelMessages.ts"

/** Arrays of items made from another by appending: the other, until a fold over the array was kept. */
const extending = new WeakMap<ReadonlyArray<ConversationItem>, ReadonlyArray<ConversationItem>>()

/**
 * Marks `items` as `base` with items appended, so that a fold over `items` resumes where the one
 * kept for `base` ended. `settled` when `items` replaces `base` as an agent's settled items: then
 * a `base` never folded is skipped for the array it extends, so that the newest array never keeps
 * a chain of older ones alive.
 */
export const appendedTo = (
  items: ReadonlyArray<ConversationItem>,
  base: ReadonlyArray<ConversationItem>,
  settled: boolean
) => {
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
 * `fold` over an array of items, kept per array (never to be changed by the caller): an array
 * marked as another's with items appended (`appendedTo`) folds only those, from a copy of the
 * other's state.
 */
export const keptFold = <S>(fold: ItemFold<S>): (items: ReadonlyArray<ConversationItem>) => S => {
  const kept = new WeakMap<ReadonlyArray<ConversationItem>, S>()
  const settled = (state: S) => {
    fold.settle(state)
    return state
  }
  const stateOf = (items: ReadonlyArray<ConversationItem>): S => {
    const known = kept.get(items)
    if (known !== undefined) return known
    const base = extending.get(items)
    const state = base === undefined ? fold.start() : fold.copy(settled(stateOf(base)))
    for (let index = base === undefined ? 0 : base.length; index < items.length; index++) fold.step(state, items[index])
    extending.delete(items)
    kept.set(items, state)
    return state
  }
  return stateOf
}

const COMMA = Buffer.from(",")

/** The first chunk's size in bytes; each next chunk is twice the one before, up to CHUNK_BYTES. */
const FIRST_CHUNK_BYTES = 1024
const CHUNK_BYTES = 64 * 1024

const chunkSize = (index: number) => Math.min(FIRST_CHUNK_BYTES * 2 ** index, CHUNK_BYTES)

/**
 * Bytes appended in chunks that never move or grow (a new chunk holds `chunkSize(i)` bytes), so a
 * long conversation's past is neither copied as it grows nor kept with room for as much again. A
 * settled state and the copies made from it share one, each knowing how many of its bytes are its
 * own; only one whose bytes end where the written bytes end appends in place, any other first
 * takes a log of its own sharing the chunks that hold its bytes (the last one cut where they end,
 * so that nothing is written after them).
 */
interface ByteLog {
  readonly chunks: Array<Buffer>
  written: number
}

/** The chunks of `log` holding its first `length` bytes, the last cut to where they end. */
const prefixChunks = (log: ByteLog, length: number): Array<Buffer> => {
  const chunks: Array<Buffer> = []
  let offset = 0
  for (const chunk of log.chunks) {
    if (offset >= length) break
    chunks.push(offset + chunk.length <= length ? chunk : chunk.subarray(0, length - offset))
    offset += chunk.length
  }
  return chunks
}

/** Appends `bytes` after the log's written bytes, in new chunks past the last one's room. */
const append = (log: ByteLog, bytes: Buffer) => {
  let from = 0
  let end = log.chunks.reduce((total, chunk) => total + chunk.length, 0)
  while (from < bytes.length) {
    if (log.written === end) {
      const chunk = Buffer.allocUnsafeSlow(chunkSize(log.chunks.length))
      log.chunks.push(chunk)
      end += chunk.length
    }
    const last = log.chunks[log.chunks.length - 1]
    const at = last.length - (end - log.written)
    const count = Math.min(last.length - at, bytes.length - from)
    bytes.copy(last, at, from, from + count)
    from += count
    log.written += count
  }
}

/**
 * The elements of a JSON array being written: those written before the last `settle` as UTF-8
 * bytes (the first `length` of a ByteLog, which never change), the newer ones as text.
 */
export class JsonElements {
  private constructor(
    private log: ByteLog,
    private length: number,
    private readonly texts: Array<string>
  ) {}

  static empty(): JsonElements {
    return new JsonElements({ chunks: [], written: 0 }, 0, [])
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
    if (this.log.written !== this.length) this.log = { chunks: prefixChunks(this.log, this.length), written: this.length }
    append(this.log, bytes)
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
