/** Tool calls of a turn and their results. */
import { Schema } from "effect"
import { AgentId, EventId, ToolCallId, TurnId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { ContentBlock, SubmittedContentBlock } from "./ContentBlocks.ts"
import { strict } from "../shared/Strict.ts"

export const ToolCallState = Schema.Literal("awaiting_authorization", "ready", "running", "completed", "cancelled")
export type ToolCallState = typeof ToolCallState.Type

export const ToolType = Schema.Literal("built_in", "custom")
export const ToolOutcome = Schema.Literal("succeeded", "failed")

export class ToolCall extends Schema.Class<ToolCall>("ToolCall")({
  id: ToolCallId,
  agent_id: AgentId,
  turn_id: TurnId,
  provider_call_id: Schema.String,
  name: Schema.String,
  input: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  type: ToolType,
  state: ToolCallState,
  created_at: Timestamp,
  outcome: Schema.optional(ToolOutcome),
  completed_at: Schema.optional(Timestamp)
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
}).annotations(strict)
export type SubmitToolResult = typeof SubmitToolResult.Type

export class ToolResultAccepted extends Schema.Class<ToolResultAccepted>("ToolResultAccepted")({
  tool_call: ToolCall,
  tool_result: ToolResult
}) {}
