/**
 * The turns of a model view that have ended (Conversation.ts), in the order they ended: for each,
 * the sequence of its end, how many of the view's settled items are its own, and about what they
 * hold in bytes. The history cache keeps a view for each recently active agent, so it keeps these
 * for every turn of their past: three numbers a turn in a Float64Array (24 bytes outside the heap),
 * not an object a turn on the heap (56 bytes, which V8 keeps several times over; docs/performance-record.md,
 * "Ended turns packed"). Never changed once made: appending makes new turns sharing the array.
 */

/** One ended turn. */
export interface EndedTurn {
  readonly endSequence: number
  readonly itemCount: number
  readonly bytes: number
}

/** Numbers a turn takes: its end's sequence, its item count, its bytes. */
const FIELDS = 3
/** Turns the smallest array holds; a larger one holds a power of two of turns. */
const FIRST_CAPACITY = 8

/**
 * An array of turns that several EndedTurns may share, each knowing how many of its turns are its
 * own: only one whose turns end where the written turns end appends in place.
 */
interface TurnStore {
  readonly numbers: Float64Array
  written: number
}

const storeFor = (turns: number): TurnStore => {
  let capacity = FIRST_CAPACITY
  while (capacity < turns) capacity *= 2
  return { numbers: new Float64Array(capacity * FIELDS), written: 0 }
}

/** The empty store: never appended to (its capacity is 0). */
const NO_TURNS: TurnStore = { numbers: new Float64Array(0), written: 0 }

export class EndedTurns {
  /** Its turns: the first `length` of the store's. */
  private readonly store: TurnStore
  readonly length: number
  /** The turns' item counts added up. */
  readonly itemCount: number
  /** The turns' bytes added up. */
  readonly bytes: number

  private constructor(store: TurnStore, length: number, itemCount: number, bytes: number) {
    this.store = store
    this.length = length
    this.itemCount = itemCount
    this.bytes = bytes
  }

  static readonly empty: EndedTurns = new EndedTurns(NO_TURNS, 0, 0, 0)

  static of(turns: ReadonlyArray<EndedTurn>): EndedTurns {
    return EndedTurns.empty.appended(turns)
  }

  /** The turn at `index` (0 ≤ index < length). */
  at(index: number): EndedTurn {
    const numbers = this.store.numbers
    const at = index * FIELDS
    return { endSequence: numbers[at], itemCount: numbers[at + 1], bytes: numbers[at + 2] }
  }

  /** Every turn, in order. */
  toArray(): Array<EndedTurn> {
    return Array.from({ length: this.length }, (_, index) => this.at(index))
  }

  /**
   * These turns, then `more`: written after them in the store when no other EndedTurns wrote past
   * them and it has room, else into a store of their own, with room for a power of two of turns (so
   * that a view's turns are copied only each time their number doubles).
   */
  appended(more: ReadonlyArray<EndedTurn>): EndedTurns {
    if (more.length === 0) return this
    const length = this.length + more.length
    const inPlace = this.store.written === this.length && this.store.numbers.length >= length * FIELDS
    const store = inPlace ? this.store : storeFor(length)
    if (!inPlace) {
      store.numbers.set(this.store.numbers.subarray(0, this.length * FIELDS))
      store.written = this.length
    }
    let { bytes, itemCount } = this
    let at = this.length * FIELDS
    for (const turn of more) {
      store.numbers[at++] = turn.endSequence
      store.numbers[at++] = turn.itemCount
      store.numbers[at++] = turn.bytes
      itemCount += turn.itemCount
      bytes += turn.bytes
    }
    store.written = length
    return new EndedTurns(store, length, itemCount, bytes)
  }

  /** The turns that ended after `sequence` (the last ones: turns end in sequence order), in a store of their own. */
  endingAfter(sequence: number): EndedTurns {
    let first = this.length
    while (first > 0 && this.at(first - 1).endSequence > sequence) first--
    return EndedTurns.of(this.toArray().slice(first))
  }
}
