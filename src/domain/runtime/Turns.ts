/** Turns: the work an input starts, from its first model call to its end. */
import { Schema } from "effect"
import { AgentId, InputId, TurnId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { TokenUsage } from "./Events.ts"

export const TurnStatus = Schema.Literals(["running", "waiting", "completed", "failed", "cancelled"])
export type TurnStatus = typeof TurnStatus.Type

export class Turn extends Schema.Class<Turn>("Turn")({
  id: TurnId,
  agent_id: AgentId,
  input_id: InputId,
  status: TurnStatus,
  error: Schema.NullOr(Schema.String),
  model_calls: Schema.Int,
  usage: TokenUsage,
  started_at: Timestamp,
  completed_at: Schema.NullOr(Timestamp),
  duration_ms: Schema.NullOr(Schema.Int)
}) {}
