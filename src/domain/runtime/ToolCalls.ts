/** Tool calls of a turn and their results. */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { AgentId, EventId, ToolCallId, TurnId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { ContentBlock, SubmittedContentBlock } from "./ContentBlocks.ts"

export const ToolCallState = Schema.Literals(["awaiting_authorization", "ready", "running", "completed", "cancelled"])
export type ToolCallState = typeof ToolCallState.Type

export const ToolType = Schema.Literals(["built_in", "custom"])
export const ToolOutcome = Schema.Literals(["succeeded", "failed"])

export class ToolCall extends Schema.Class<ToolCall>("ToolCall")({
  id: ToolCallId,
  agent_id: AgentId,
  turn_id: TurnId,
  provider_call_id: Schema.String,
  name: Schema.String,
  input: Schema.Record(Schema.String, Schema.Unknown),
  type: ToolType,
  state: ToolCallState,
  created_at: Timestamp,
  outcome: optional(ToolOutcome),
  completed_at: optional(Timestamp)
}) {}

export class ToolResult extends Schema.Class<ToolResult>("ToolResult")({
  event_id: EventId,
  agent_id: AgentId,
  tool_call_id: ToolCallId,
  outcome: ToolOutcome,
  content_blocks: Schema.Array(ContentBlock),
  created_at: Timestamp
}) {}

export const SubmitToolResult = Schema.Struct({
  outcome: ToolOutcome,
  content_blocks: Schema.Array(SubmittedContentBlock)
})
export type SubmitToolResult = typeof SubmitToolResult.Type

export class ToolResultAccepted extends Schema.Class<ToolResultAccepted>("ToolResultAccepted")({
  tool_call: ToolCall,
  tool_result: ToolResult
}) {}
