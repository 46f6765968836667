/**
 * Live output (docs/agents-api.md, "Live output"): while the model answers, the events stream
 * sends the text and the reasoning summary as they come, in Server-Sent Events without an `id:`
 * (they are not part of the stored timeline), before the step's stored `model_output` event.
 */
import { Schema } from "effect"
import { AgentId, TurnId } from "../shared/Ids.ts"
import { NonNegativeInt } from "../shared/NonNegativeInt.ts"

/** The SSE event names of live output, by kind. */
export const OUTPUT_DELTA_EVENTS = {
  text: "text_delta",
  reasoning_summary: "reasoning_summary_delta"
} as const

export type OutputDeltaKind = keyof typeof OUTPUT_DELTA_EVENTS

export const OutputDelta = Schema.Struct({
  agent_id: AgentId,
  turn_id: TurnId,
  /** The model call of the turn it belongs to (1 for the first). */
  step: Schema.Int,
  kind: Schema.Literals(["text", "reasoning_summary"]),
  /**
   * Where `delta` starts in the text of its turn, step and kind, in Unicode code points: 0 for
   * the first. A step run again after a crash starts again at 0, so a client that keeps the text
   * up to `offset` and appends `delta` never shows the restarted answer twice.
   */
  offset: NonNegativeInt,
  /** The next piece of text, at `offset` of the text of the same turn, step and kind. */
  delta: Schema.String
}).annotate({ identifier: "OutputDelta" })
export type OutputDelta = typeof OutputDelta.Type

/** A delta as JSON: the `data:` of its SSE event, and the payload of the notification that carries it to other processes. */
export const encodeOutputDelta = Schema.encodeSync(Schema.fromJsonString(OutputDelta))
