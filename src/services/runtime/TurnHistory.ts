/**
 * The agent's timeline as the model sees it at a model call (Conversation.ts): every event,
 * grouped into turns, and the conversation items they make.
 *
 * Kept incrementally (docs/performance.md): this process remembers the events it has read of
 * recently active agents, and each model call reads only the events after the last one it has
 * (events are never changed, and an agent's sequences are gapless and committed in order, so
 * what follows the last read sequence is exactly what is new), with the provider ids of the new
 * tool calls only. What is remembered is bounded (MAX_CACHED_EVENTS, least recently used agents
 * forgotten first); a forgotten agent, or one after a restart, is read whole again.
 */
import { Effect } from "effect"
import type { AgentId, ToolCallId } from "../../domain/shared/Ids.ts"
import type { Agent } from "../../domain/runtime/Agents.ts"
import type { AgentEvent } from "../../domain/runtime/Events.ts"
import { conversationOf, type TimelineView, viewOf } from "./Conversation.ts"
import type { ConversationItem } from "./model/ModelMessages.ts"
import { Timeline } from "./Timeline.ts"
import { ToolCallsRepository } from "./ToolCallsRepository.ts"

/** The events read per page. */
const PAGE = 500

/** Events remembered across all agents at most; past it, the least recently used agents are forgotten. */
export const MAX_CACHED_EVENTS = 200_000

export interface History {
  readonly view: TimelineView
  /** The ids the provider gave the agent's tool calls, by call id. */
  readonly providerCallIds: ReadonlyMap<string, string>
  readonly conversation: ReadonlyArray<ConversationItem>
}

/** What this process has read of an agent's timeline: never changed once made (a read makes a new one). */
interface Known {
  readonly events: ReadonlyArray<AgentEvent>
  /** The sequence of the last event in `events` (0: none). */
  readonly last: number
  readonly providerCallIds: ReadonlyMap<string, string>
}

const NOTHING_KNOWN: Known = { events: [], last: 0, providerCallIds: new Map() }

export class TurnHistory extends Effect.Service<TurnHistory>()("TurnHistory", {
  effect: Effect.gen(function*() {
    const timeline = yield* Timeline
    const toolCalls = yield* ToolCallsRepository
    /** In least recently used order (a Map iterates in insertion order; a use re-inserts). */
    const known = new Map<AgentId, Known>()
    let knownEvents = 0

    const remember = (agentId: AgentId, next: Known) => {
      const previous = known.get(agentId)
      if (previous !== undefined) {
        known.delete(agentId)
        knownEvents -= previous.events.length
      }
      known.set(agentId, next)
      knownEvents += next.events.length
      for (const [oldest, entry] of known) {
        if (knownEvents <= MAX_CACHED_EVENTS || oldest === agentId) break
        known.delete(oldest)
        knownEvents -= entry.events.length
      }
    }

    /** The events after `after`, oldest first. */
    const eventsAfter = (agent: Agent, after: number) =>
      Effect.gen(function*() {
        const events: Array<AgentEvent> = []
        while (true) {
          const page = yield* timeline.list(agent, { after_sequence: after, limit: PAGE })
          for (const event of page.data) events.push(event)
          if (!page.has_more) return events
          after = page.next_after_sequence
        }
      })

    /** What is known of the agent's timeline, brought up to date. */
    const catchUp = (agent: Agent) =>
      Effect.gen(function*() {
        const before = known.get(agent.id) ?? NOTHING_KNOWN
        const fresh = yield* eventsAfter(agent, before.last)
        if (fresh.length === 0) return before
        const newCalls = fresh.flatMap((event) => event.event_kind === "tool_call" ? [event.tool_call_id as ToolCallId] : [])
        const providerCallIds = newCalls.length === 0
          ? before.providerCallIds
          : new Map([...before.providerCallIds, ...yield* toolCalls.providerCallIds(newCalls)])
        const after: Known = { events: before.events.concat(fresh), last: fresh[fresh.length - 1].sequence, providerCallIds }
        remember(agent.id, after)
        return after
      })

    /** The history of the agent as of now. */
    const of = (agent: Agent): Effect.Effect<History> =>
      Effect.map(catchUp(agent), ({ events, providerCallIds }) => {
        const view = viewOf(events)
        return { view, providerCallIds, conversation: conversationOf(view, providerCallIds) }
      })

    return { of } as const
  }),
  dependencies: [Timeline.Default, ToolCallsRepository.Default]
}) {}
