/** Interactions: approvals of tool calls and questions to a person, which pause a turn. */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { AgentId, InteractionId, ProjectId, ToolCallId, TurnId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"

export const InteractionKind = Schema.Literals(["approval", "question"])
export const InteractionStatus = Schema.Literals(["pending", "resolved", "closed"])
export const Decision = Schema.Literals(["approve", "deny"])

export class Interaction extends Schema.Class<Interaction>("Interaction")({
  id: InteractionId,
  agent_id: AgentId,
  project_id: ProjectId,
  turn_id: TurnId,
  tool_call_id: Schema.NullOr(ToolCallId),
  kind: InteractionKind,
  status: InteractionStatus,
  question: Schema.NullOr(Schema.String),
  decision: Schema.NullOr(Decision),
  answer: Schema.NullOr(Schema.String),
  message: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  resolved_at: Schema.NullOr(Timestamp)
}) {}

export const ResolveInteraction = Schema.Struct({
  decision: Decision,
  answer: optional(Schema.String),
  message: optional(Schema.String)
})
export type ResolveInteraction = typeof ResolveInteraction.Type
