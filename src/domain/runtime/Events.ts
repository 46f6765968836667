/**
 * The agent timeline: one ordered log of events per agent. `sequence` is gapless
 * and strictly increasing per agent. Each input opens a turn: its `agent_input` event is the
 * turn's opening event (`turn_sequence` 0); the turn's later events count up from there.
 *
 * Event kinds (docs/runtime.md):
 * - `agent_input`: an input sent to the agent (`input_kind: content`).
 * - `model_output`: text and reasoning summaries the model produced.
 * - `tool_call`: the model asked for a tool; `tool_result`: its result.
 * - `interaction`: an approval or a question opened, resolved, or closed.
 * - `control`: a control request such as `cancel_current`.
 * - `compaction`: older turns summarized to fit the context window.
 * - `turn`: a turn started, completed, failed, or was cancelled.
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
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
import { DecimalInteger } from "../shared/DecimalInteger.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { ContentBlock } from "./ContentBlocks.ts"

const MAX_SAFE = 9007199254740991

export const Sequence = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: MAX_SAFE })))

const base = {
  id: EventId,
  org_id: OrgId,
  project_id: ProjectId,
  agent_id: AgentId,
  agent_config_id: AgentConfigId,
  turn_id: Schema.NullOr(TurnId),
  turn_sequence: Schema.NullOr(Sequence),
  is_opening_event: Schema.Boolean,
  sequence: Sequence,
  created_at: Timestamp
}

export const TokenUsage = Schema.Struct({
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  cache_read_tokens: Schema.Int,
  cache_write_tokens: Schema.Int
}).annotate({ identifier: "TokenUsage" })
export type TokenUsage = typeof TokenUsage.Type

export const AgentInputEvent = Schema.Struct({
  ...base,
  event_kind: Schema.Literal("agent_input"),
  agent_input_id: InputId,
  input_kind: Schema.Literal("content"),
  content_blocks: Schema.Array(ContentBlock),
  actor_id: Schema.NullOr(ActorId),
  input_idempotency_key: Schema.NullOr(Schema.String)
}).annotate({ identifier: "AgentInputEvent" })

export const ModelOutputEvent = Schema.Struct({
  ...base,
  event_kind: Schema.Literal("model_output"),
  content_blocks: Schema.Array(ContentBlock)
}).annotate({ identifier: "ModelOutputEvent" })

export const ToolCallEvent = Schema.Struct({
  ...base,
  event_kind: Schema.Literal("tool_call"),
  tool_call_id: ToolCallId,
  tool_name: Schema.String,
  tool_type: Schema.Literals(["built_in", "custom"]),
  tool_input: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "ToolCallEvent" })

export const ToolResultEvent = Schema.Struct({
  ...base,
  event_kind: Schema.Literal("tool_result"),
  tool_call_id: ToolCallId,
  outcome: Schema.Literals(["succeeded", "failed"]),
  content_blocks: Schema.Array(ContentBlock)
}).annotate({ identifier: "ToolResultEvent" })

export const InteractionEvent = Schema.Struct({
  ...base,
  event_kind: Schema.Literal("interaction"),
  interaction_id: InteractionId,
  interaction_kind: Schema.Literals(["approval", "question"]),
  interaction_status: Schema.Literals(["opened", "resolved", "closed"]),
  tool_call_id: Schema.NullOr(ToolCallId),
  content_blocks: Schema.Array(ContentBlock)
}).annotate({ identifier: "InteractionEvent" })

export const ControlEvent = Schema.Struct({
  ...base,
  event_kind: Schema.Literal("control"),
  control_type: Schema.Literal("cancel_current"),
  actor_id: Schema.NullOr(ActorId)
}).annotate({ identifier: "ControlEvent" })

export const CompactionEvent = Schema.Struct({
  ...base,
  event_kind: Schema.Literal("compaction"),
  compacted_through_sequence: Sequence,
  content_blocks: Schema.Array(ContentBlock)
}).annotate({ identifier: "CompactionEvent" })

export const TurnEvent = Schema.Struct({
  ...base,
  event_kind: Schema.Literal("turn"),
  turn_status: Schema.Literals(["started", "completed", "failed", "cancelled"]),
  error: Schema.NullOr(Schema.String),
  usage: Schema.NullOr(TokenUsage)
}).annotate({ identifier: "TurnEvent" })

export const AgentEvent = Schema.Union([
  AgentInputEvent,
  ModelOutputEvent,
  ToolCallEvent,
  ToolResultEvent,
  InteractionEvent,
  ControlEvent,
  CompactionEvent,
  TurnEvent
]).annotate({ identifier: "AgentEvent" })
export type AgentEvent = typeof AgentEvent.Type

/** The events of the kind, or kinds, `K`. */
export type EventOf<K extends AgentEvent["event_kind"]> = Extract<AgentEvent, { readonly event_kind: K }>

type BaseField = keyof typeof base
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** An event to append: its kind's fields, the turn it belongs to; the timeline assigns the rest. */
export type NewEvent = DistributiveOmit<AgentEvent, Exclude<BaseField, "turn_id" | "is_opening_event">>

export const DEFAULT_EVENTS_LIMIT = 100
export const MAX_EVENTS_LIMIT = 500

export const EventsQuery = Schema.Struct({
  after_sequence: optional(DecimalInteger(0, MAX_SAFE)),
  before_sequence: optional(DecimalInteger(0, MAX_SAFE)),
  limit: optional(DecimalInteger(1, MAX_EVENTS_LIMIT))
})
export type EventsQuery = typeof EventsQuery.Type

export const EventsPage = Schema.Struct({
  data: Schema.Array(AgentEvent),
  next_after_sequence: Sequence,
  has_more: Schema.Boolean,
  next_before_sequence: Schema.NullOr(Sequence)
}).annotate({ identifier: "EventsPage" })
export type EventsPage = typeof EventsPage.Type
