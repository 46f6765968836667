/**
 * The runtime's resources on the wire: agents, inputs, turns, tool calls and results,
 * interactions, actors (spec 2.11, issue 4).
 */
import { Schema } from "effect"
import {
  ActorId,
  AgentConfigId,
  AgentId,
  EventId,
  InputId,
  InteractionId,
  OrgId,
  ProjectId,
  ToolCallId,
  TurnId
} from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { ContentBlock, SubmittedContentBlock } from "./ContentBlocks.ts"
import { AgentInputEvent, ControlEvent, TokenUsage } from "./Events.ts"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** idle: nothing to do; running: a turn is working; waiting: a turn waits for a tool result, an approval or an answer. */
export const AgentStatus = Schema.Literal("idle", "running", "waiting")
export type AgentStatus = typeof AgentStatus.Type

export class Agent extends Schema.Class<Agent>("Agent")({
  id: AgentId,
  org_id: OrgId,
  project_id: ProjectId,
  agent_config_id: AgentConfigId,
  name: Schema.NullOr(Schema.String),
  metadata: JsonObject,
  status: AgentStatus,
  current_turn_id: Schema.NullOr(TurnId),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export const InputStatus = Schema.Literal("queued", "started", "withdrawn")

/** An input in the backlog (or already started). */
export class AgentInput extends Schema.Class<AgentInput>("AgentInput")({
  id: InputId,
  agent_id: AgentId,
  turn_id: TurnId,
  status: InputStatus,
  event_sequence: Schema.Int,
  content_blocks: Schema.Array(ContentBlock),
  actor_id: Schema.NullOr(ActorId),
  input_idempotency_key: Schema.NullOr(Schema.String),
  created_at: Timestamp
}) {}

export const SendInput = Schema.Struct({
  content_blocks: Schema.Array(SubmittedContentBlock).pipe(Schema.minItems(1)),
  input_idempotency_key: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))),
  actor_id: Schema.optional(ActorId)
})
export type SendInput = typeof SendInput.Type

/** The answer to an input: its timeline event, and whether it started a turn or waits in the backlog. */
export class InputAccepted extends Schema.Class<InputAccepted>("InputAccepted")({
  event: AgentInputEvent,
  disposition: Schema.Literal("started", "queued")
}) {}

export const TurnStatus = Schema.Literal("running", "waiting", "completed", "failed", "cancelled")

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

export const ToolCallState = Schema.Literal("awaiting_authorization", "ready", "running", "completed", "cancelled")
export type ToolCallState = typeof ToolCallState.Type

export class ToolCall extends Schema.Class<ToolCall>("ToolCall")({
  id: ToolCallId,
  agent_id: AgentId,
  turn_id: TurnId,
  provider_call_id: Schema.String,
  name: Schema.String,
  input: JsonObject,
  type: Schema.Literal("built_in", "custom"),
  state: ToolCallState,
  created_at: Timestamp,
  outcome: Schema.optional(Schema.Literal("succeeded", "failed")),
  completed_at: Schema.optional(Timestamp)
}) {}

export class ToolResult extends Schema.Class<ToolResult>("ToolResult")({
  event_id: EventId,
  agent_id: AgentId,
  tool_call_id: ToolCallId,
  outcome: Schema.Literal("succeeded", "failed"),
  content_blocks: Schema.Array(ContentBlock),
  created_at: Timestamp
}) {}

export const SubmitToolResult = Schema.Struct({
  outcome: Schema.Literal("succeeded", "failed"),
  content_blocks: Schema.Array(SubmittedContentBlock)
})
export type SubmitToolResult = typeof SubmitToolResult.Type

export class ToolResultAccepted extends Schema.Class<ToolResultAccepted>("ToolResultAccepted")({
  tool_call: ToolCall,
  tool_result: ToolResult
}) {}

export const InteractionKind = Schema.Literal("approval", "question")
export const InteractionStatus = Schema.Literal("pending", "resolved", "closed")

export class Interaction extends Schema.Class<Interaction>("Interaction")({
  id: InteractionId,
  agent_id: AgentId,
  project_id: ProjectId,
  turn_id: TurnId,
  tool_call_id: Schema.NullOr(ToolCallId),
  kind: InteractionKind,
  status: InteractionStatus,
  question: Schema.NullOr(Schema.String),
  decision: Schema.NullOr(Schema.Literal("approve", "deny")),
  answer: Schema.NullOr(Schema.String),
  message: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  resolved_at: Schema.NullOr(Timestamp)
}) {}

export const ResolveInteraction = Schema.Struct({
  decision: Schema.Literal("approve", "deny"),
  answer: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String)
})
export type ResolveInteraction = typeof ResolveInteraction.Type

export const Control = Schema.Struct({ control_type: Schema.Literal("cancel_current") })

export const ControlAccepted = ControlEvent

export class Actor extends Schema.Class<Actor>("Actor")({
  id: ActorId,
  org_id: OrgId,
  project_id: ProjectId,
  external_id: Schema.String,
  display_name: Schema.NullOr(Schema.String),
  created_at: Timestamp
}) {}

export const CreateActor = Schema.Struct({
  external_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)),
  display_name: Schema.optional(Schema.String.pipe(Schema.maxLength(255)))
})

export const LaunchAgent = Schema.Struct({
  agent_config_id: AgentConfigId,
  name: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))),
  metadata: Schema.optional(JsonObject),
  input: Schema.optional(SendInput)
})
export type LaunchAgent = typeof LaunchAgent.Type

/** The answer to a launch: the agent, and, when it was launched with an input, the answer to that input. */
export class LaunchedAgent extends Schema.Class<LaunchedAgent>("LaunchedAgent")({
  ...Agent.fields,
  input: Schema.optional(InputAccepted)
}) {}
