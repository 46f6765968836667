/**
 * Checks of live output deltas (docs/agents-api.md, "Live output"): each delta's `offset` is
 * where it starts in its step's text, in Unicode code points.
 */
import type { OutputDelta } from "../../src/domain/runtime/OutputDeltas.ts"

/** The offsets deltas that follow each other without a gap have: where the ones before end, in code points. */
export const contiguousOffsets = (deltas: ReadonlyArray<Pick<OutputDelta, "delta">>) => {
  let end = 0
  return deltas.map((delta) => {
    const offset = end
    end += Array.from(delta.delta).length
    return offset
  })
}
