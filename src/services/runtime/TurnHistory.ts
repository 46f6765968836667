/**
 * The agent's timeline as the model sees it at a model call (Conversation.ts): every event,
 * grouped into turns, and the conversation items they make.
 */
import { Effect } from "effect"
import type { Agent } from "../../domain/runtime/Agents.ts"
import type { AgentEvent } from "../../domain/runtime/Events.ts"
import { conversationOf, type TimelineView, viewOf } from "./Conversation.ts"
import type { ConversationItem } from "./model/ModelMessages.ts"
import { Timeline } from "./Timeline.ts"
import { ToolCallsRepository } from "./ToolCallsRepository.ts"

/** The events read per page. */
const PAGE = 500

export interface History {
  readonly view: TimelineView
  /** The ids the provider gave the agent's tool calls, by call id. */
  readonly providerCallIds: ReadonlyMap<string, string>
  readonly conversation: ReadonlyArray<ConversationItem>
}

export class TurnHistory extends Effect.Service<TurnHistory>()("TurnHistory", {
  effect: Effect.gen(function*() {
    const timeline = yield* Timeline
    const toolCalls = yield* ToolCallsRepository

    const allEvents = (agent: Agent) =>
      Effect.gen(function*() {
        const events: Array<AgentEvent> = []
        let after = 0
        while (true) {
          const page = yield* timeline.list(agent, { after_sequence: after, limit: PAGE })
          events.push(...page.data)
          if (!page.has_more) return events
          after = page.next_after_sequence
        }
      })

    /** The history of the agent as of now. */
    const of = (agent: Agent): Effect.Effect<History> =>
      Effect.gen(function*() {
        const view = viewOf(yield* allEvents(agent))
        const providerCallIds = yield* toolCalls.providerCallIds(agent.id)
        return { view, providerCallIds, conversation: conversationOf(view, providerCallIds) }
      })

    return { of } as const
  }),
  dependencies: [Timeline.Default, ToolCallsRepository.Default]
}) {}
