/**
 * Rows of the runtime's tables (migration 0006) that more than one service reads, and their wire
 * form: tool calls and interactions. The engine (AgentRuntime) and the reads (Agents) share them.
 */
import type { AgentId, EventId, InteractionId, ProjectId, ToolCallId, TurnId } from "../../domain/shared/Ids.ts"
import { Interaction, ToolCall, type ToolCallState } from "../../domain/runtime/Resources.ts"

export interface ToolCallRow {
  readonly id: ToolCallId
  readonly agent_id: AgentId
  readonly turn_id: TurnId
  readonly provider_call_id: string
  readonly name: string
  readonly input: Record<string, unknown>
  readonly type: "built_in" | "custom"
  readonly state: ToolCallState
  readonly outcome: "succeeded" | "failed" | null
  readonly result_event_id: EventId | null
  readonly deferred_token: string | null
  readonly created_at: Date
  readonly completed_at: Date | null
}

export interface InteractionRow {
  readonly id: InteractionId
  readonly agent_id: AgentId
  readonly project_id: ProjectId
  readonly turn_id: TurnId
  readonly tool_call_id: ToolCallId | null
  readonly kind: Interaction["kind"]
  readonly status: Interaction["status"]
  readonly question: string | null
  readonly decision: "approve" | "deny" | null
  readonly answer: string | null
  readonly message: string | null
  readonly deferred_token: string
  readonly created_at: Date
  readonly resolved_at: Date | null
}

export const toToolCall = (row: ToolCallRow) =>
  new ToolCall({
    id: row.id,
    agent_id: row.agent_id,
    turn_id: row.turn_id,
    provider_call_id: row.provider_call_id,
    name: row.name,
    input: row.input,
    type: row.type,
    state: row.state,
    created_at: row.created_at,
    ...(row.outcome === null ? {} : { outcome: row.outcome }),
    ...(row.completed_at === null ? {} : { completed_at: row.completed_at })
  })

export const toInteraction = (row: InteractionRow) =>
  new Interaction({
    id: row.id,
    agent_id: row.agent_id,
    project_id: row.project_id,
    turn_id: row.turn_id,
    tool_call_id: row.tool_call_id,
    kind: row.kind,
    status: row.status,
    question: row.question,
    decision: row.decision,
    answer: row.answer,
    message: row.message,
    created_at: row.created_at,
    resolved_at: row.resolved_at
  })
