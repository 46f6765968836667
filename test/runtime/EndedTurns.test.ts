/**
 * A model view's ended turns kept packed (src/services/runtime/EndedTurns.ts): read back, they are
 * the turns appended, in order, with their item counts and bytes added up, past several growths of
 * the array; turns made from the same turns each keep their own; those ending after a sequence
 * are the last ones.
 */
import { describe, expect, it } from "@effect/vitest"
import { type EndedTurn, EndedTurns } from "../../src/services/runtime/EndedTurns.ts"

/** The turn ending at `endSequence`, with sizes that differ from turn to turn (sequences past 2³² too). */
const turn = (endSequence: number): EndedTurn => ({ endSequence, itemCount: endSequence % 7 + 1, bytes: endSequence * 13 + 0.5 })

const expectTurns = (turns: EndedTurns, expected: ReadonlyArray<EndedTurn>) => {
  expect(turns.toArray()).toEqual(expected)
  expect(turns.length).toBe(expected.length)
  expect(turns.itemCount).toBe(expected.reduce((total, ended) => total + ended.itemCount, 0))
  expect(turns.bytes).toBe(expected.reduce((total, ended) => total + ended.bytes, 0))
}

describe("a view's ended turns", () => {
  it("read back are the turns appended one or several at a time, in order, with their sizes added up", () => {
    let turns = EndedTurns.empty
    const expected: Array<EndedTurn> = []
    for (let sequence = 10; sequence < 1_000; sequence += sequence % 3 === 0 ? 3 : 5) {
      const more = sequence % 2 === 0 ? [turn(sequence)] : [turn(sequence), turn(sequence + 1)]
      turns = turns.appended(more)
      expected.push(...more)
    }
    expectTurns(turns, expected)
    expectTurns(EndedTurns.of([turn(2 ** 40), turn(2 ** 40 + 9)]), [turn(2 ** 40), turn(2 ** 40 + 9)])
    expectTurns(EndedTurns.empty, [])
  })

  it("made from the same turns, each keeps its own", () => {
    const base = EndedTurns.of([1, 2, 3].map(turn))
    const left = base.appended([turn(4)]).appended([turn(5)])
    const right = base.appended([turn(6), turn(7)])
    const more = left.appended([turn(8)])
    const grown = base.appended(Array.from({ length: 20 }, (_, index) => turn(100 + index)))
    expectTurns(base, [1, 2, 3].map(turn))
    expectTurns(left, [1, 2, 3, 4, 5].map(turn))
    expectTurns(right, [1, 2, 3, 6, 7].map(turn))
    expectTurns(more, [1, 2, 3, 4, 5, 8].map(turn))
    expectTurns(grown, [...[1, 2, 3].map(turn), ...Array.from({ length: 20 }, (_, index) => turn(100 + index))])
    expectTurns(base.appended([]), [1, 2, 3].map(turn))
  })

  it("ending after a sequence are the last ones, and appending to them leaves the others as they were", () => {
    const turns = EndedTurns.of([3, 8, 12, 20].map(turn))
    expectTurns(turns.endingAfter(8), [12, 20].map(turn))
    expectTurns(turns.endingAfter(9), [12, 20].map(turn))
    expectTurns(turns.endingAfter(0), [3, 8, 12, 20].map(turn))
    expectTurns(turns.endingAfter(20), [])
    expectTurns(turns.endingAfter(8).appended([turn(25)]), [12, 20, 25].map(turn))
    expectTurns(turns, [3, 8, 12, 20].map(turn))
  })
})
