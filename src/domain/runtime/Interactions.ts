/** Interactions: approvals of tool calls and questions to a person, which pause a turn. */
import { Schema } from "effect"
import { AgentId, InteractionId, ProjectId, ToolCallId, TurnId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { strict } from "../shared/Strict.ts"

export const InteractionKind = Schema.Literal("approval", "question")
export const InteractionStatus = Schema.Literal("pending", "resolved", "closed")
export const Decision = Schema.Literal("approve", "deny")

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
  answer: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String)
}).annotations(strict)
export type ResolveInteraction = typeof ResolveInteraction.Type
