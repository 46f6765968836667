/**
 * The model's view of an agent's timeline (docs/runtime.md, "The model request"): the turns that
 * have started, in the order they ran, each as its input, the model's output, its tool calls and
 * their results; turns covered by the latest compaction are replaced by its summary. Queued and
 * withdrawn inputs are not part of it. A tool call left without a result (its turn was cancelled)
 * gets a failed result saying so, because every provider wants each call answered.
 */
import type { AgentEvent } from "../../domain/runtime/Events.ts"
import type { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import { Schema } from "effect"
import { type ConversationItem, type ModelContentBlock, ReasoningReplay } from "./model/ModelMessages.ts"

const isReasoningReplay = Schema.is(ReasoningReplay)

/** The metadata key under which a reasoning summary block keeps what its provider needs replayed. */
export const REPLAY_METADATA_KEY = "provider_replay"

export const SUMMARY_PREFIX = "Summary of the earlier conversation:\n"

const CANCELLED_RESULT = "The tool call was cancelled before it produced a result."

/** Content blocks as the model reads them: media are described, not sent. */
export const modelBlocks = (blocks: ReadonlyArray<ContentBlock>): ReadonlyArray<ModelContentBlock> =>
  blocks.flatMap((block): ReadonlyArray<ModelContentBlock> => {
    switch (block.type) {
      case "text":
        return [{ type: "text", text: block.text }]
      case "media_ref":
        return [{
          type: "text",
          text: `[attached ${block.media_type}, ${block.size_bytes} bytes, artifact ${block.artifact_id}]`
        }]
      case "reasoning_summary":
        return []
    }
  })

const replayOf = (block: ContentBlock): ReasoningReplay | undefined => {
  const replay = block.metadata?.[REPLAY_METADATA_KEY]
  return isReasoningReplay(replay) ? replay : undefined
}

type TurnEventOf<K extends AgentEvent["event_kind"]> = Extract<AgentEvent, { event_kind: K }>

export interface TimelineView {
  /** The latest compaction, if any. */
  readonly compaction: TurnEventOf<"compaction"> | undefined
  /** Started turns not covered by the compaction, in the order they ran, each with its events in order. */
  readonly turns: ReadonlyArray<{ readonly turnId: string; readonly events: ReadonlyArray<AgentEvent>; readonly endSequence: number | undefined }>
}

/** Groups an agent's events (in sequence order) into the turns the model sees. */
export const viewOf = (events: ReadonlyArray<AgentEvent>): TimelineView => {
  let compaction: TurnEventOf<"compaction"> | undefined
  const started = new Set<string>()
  const ends = new Map<string, number>()
  const byTurn = new Map<string, Array<AgentEvent>>()
  for (const event of events) {
    if (event.event_kind === "compaction") compaction = event
    if (event.turn_id === null) continue
    if (event.event_kind === "turn") {
      if (event.turn_status === "started") started.add(event.turn_id)
      else ends.set(event.turn_id, event.sequence)
    }
    const list = byTurn.get(event.turn_id) ?? []
    list.push(event)
    byTurn.set(event.turn_id, list)
  }
  const through = compaction?.compacted_through_sequence ?? -1
  const turns = [...started]
    .filter((turnId) => {
      const end = ends.get(turnId)
      return end === undefined || end > through
    })
    .sort()
    .map((turnId) => ({ turnId, events: byTurn.get(turnId) ?? [], endSequence: ends.get(turnId) }))
  return { compaction, turns }
}

/** The conversation items of some turns; `providerCallIds` maps tool call ids to the ids the provider gave them. */
export const itemsOf = (
  turns: TimelineView["turns"],
  providerCallIds: ReadonlyMap<string, string>
): Array<ConversationItem> => {
  const items: Array<ConversationItem> = []
  for (const turn of turns) {
    const unanswered = new Map<string, string>()
    for (const event of turn.events) {
      switch (event.event_kind) {
        case "agent_input":
          items.push({ type: "user_message", content: modelBlocks(event.content_blocks) })
          break
        case "model_output":
          for (const block of event.content_blocks) {
            if (block.type === "text") items.push({ type: "assistant_text", text: block.text })
            else if (block.type === "reasoning_summary") {
              const replay = replayOf(block)
              items.push(
                replay === undefined
                  ? { type: "assistant_reasoning", summary: block.text }
                  : { type: "assistant_reasoning", summary: block.text, replay }
              )
            }
          }
          break
        case "tool_call": {
          const callId = providerCallIds.get(event.tool_call_id) ?? event.tool_call_id
          unanswered.set(event.tool_call_id, callId)
          items.push({ type: "tool_call", call_id: callId, name: event.tool_name, input: event.tool_input })
          break
        }
        case "tool_result": {
          const callId = unanswered.get(event.tool_call_id)
          if (callId === undefined) break
          unanswered.delete(event.tool_call_id)
          items.push({ type: "tool_result", call_id: callId, outcome: event.outcome, content: modelBlocks(event.content_blocks) })
          break
        }
        default:
          break
      }
    }
    if (turn.endSequence !== undefined) {
      for (const callId of unanswered.values()) {
        items.push({ type: "tool_result", call_id: callId, outcome: "failed", content: [{ type: "text", text: CANCELLED_RESULT }] })
      }
    }
  }
  return items
}

/** The conversation the model is sent: the compaction's summary, then the turns after it. */
export const conversationOf = (view: TimelineView, providerCallIds: ReadonlyMap<string, string>): Array<ConversationItem> => {
  const summary = view.compaction === undefined ? [] : [{
    type: "user_message" as const,
    content: [{ type: "text" as const, text: SUMMARY_PREFIX + view.compaction.content_blocks.map((block) => block.type === "text" ? block.text : "").join("\n") }]
  }]
  return [...summary, ...itemsOf(view.turns, providerCallIds)]
}
