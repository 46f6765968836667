/**
 * Live output (docs/agents-api.md, "Live output"): while the model answers, the events stream
 * sends the text and the reasoning summary as they come, in Server-Sent Events without an `id:`
 * (they are not part of the stored timeline), before the step's stored `model_output` event.
 */
import { Schema } from "effect"
import { AgentId, TurnId } from "../shared/Ids.ts"

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
  /** The next piece of text, to append to what came before in the same turn, step and kind. */
  delta: Schema.String
}).annotate({ identifier: "OutputDelta" })
export type OutputDelta = typeof OutputDelta.Type
