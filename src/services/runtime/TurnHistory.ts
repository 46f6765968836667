/**
 * The agent's timeline as the model sees it at a model call (Conversation.ts).
 *
 * Kept incrementally (docs/performance-record.md): this process remembers the model's view of recently
 * active agents, and each model call reads only the events after the last one folded in (events
 * are never changed, and an agent's sequences are gapless and committed in order, so what follows
 * the last read sequence is exactly what is new), with the provider ids of the new tool calls
 * only. The events this process commits are folded in as they commit, when they follow the view's
 * last event, with the provider ids of their tool calls as the transaction recording them told
 * them (`expectCalls`; a call whose id was not told is read with its event), so a model call whose
 * agent's last sequence the view has reached reads nothing. The view keeps an ended turn as its
 * conversation items, not its events, and those as JSON (ConversationItems.ts). What is remembered
 * is bounded (MAX_CACHED_BYTES, least recently used agents forgotten first); a forgotten agent, or
 * one after a restart, is read whole again.
 */
import { Context, Effect, Layer } from "effect"
import type { AgentId, ToolCallId } from "../../domain/shared/Ids.ts"
import type { Agent } from "../../domain/runtime/Agents.ts"
import type { AgentEvent } from "../../domain/runtime/Events.ts"
import { conversationOf, EMPTY_VIEW, foldView, type ModelConversation, type ModelView } from "./Conversation.ts"
import { Timeline } from "./Timeline.ts"
import { ToolCallsRepository } from "./ToolCallsRepository.ts"

/** No new tool calls' provider ids. */
const NO_CALL_IDS: ReadonlyMap<string, string> = new Map()

/** The events read per page. */
const PAGE = 500

/** What the views of all agents may hold at most (ModelView.bytes); past it, the least recently used agents are forgotten. */
export const MAX_CACHED_BYTES = 64 * 2 ** 20

/**
 * Provider ids told and not yet committed that are kept at most (a transaction rolled back leaves
 * its calls' ids behind); past it, the oldest are forgotten.
 */
const MAX_EXPECTED_CALLS = 1_000

export interface History {
  readonly view: ModelView
  readonly conversation: ModelConversation
}

const make = Effect.gen(function*() {
  const timeline = yield* Timeline
  const toolCalls = yield* ToolCallsRepository
  /** In least recently used order (a Map iterates in insertion order; a use re-inserts). */
  const known = new Map<AgentId, ModelView>()
  let knownBytes = 0
  /** The provider ids of tool calls being recorded, by call id, oldest first. */
  const expected = new Map<string, string>()

  const remember = (agentId: AgentId, next: ModelView) => {
    const previous = known.get(agentId)
    if (previous !== undefined) {
      known.delete(agentId)
      knownBytes -= previous.bytes
    }
    known.set(agentId, next)
    knownBytes += next.bytes
    for (const [oldest, view] of known) {
      if (knownBytes <= MAX_CACHED_BYTES || oldest === agentId) break
      known.delete(oldest)
      knownBytes -= view.bytes
    }
  }

  /** The provider ids told for the tool calls among `events`, taken from what is expected; none when one is missing. */
  const takeCallIds = (events: ReadonlyArray<AgentEvent>): ReadonlyMap<string, string> | undefined => {
    const calls = events.flatMap((event) => event.event_kind === "tool_call" ? [event.tool_call_id] : [])
    if (calls.length === 0) return NO_CALL_IDS
    const ids = new Map<string, string>()
    for (const callId of calls) {
      const providerCallId = expected.get(callId)
      expected.delete(callId)
      if (providerCallId !== undefined) ids.set(callId, providerCallId)
    }
    return ids.size === calls.length ? ids : undefined
  }

  /** Folds the events this process committed into the views they continue. */
  yield* timeline.observeCommits((appended) => {
    for (const [agentId, events] of appended) {
      const callIds = takeCallIds(events)
      const view = known.get(agentId)
      if (view === undefined || callIds === undefined || events.length === 0 || events[0].sequence !== view.last + 1) continue
      remember(agentId, foldView(view, events, callIds))
    }
  })

  /**
   * Tells the views the provider ids of tool calls a transaction of this process is recording,
   * so that its commit folds their events in at once: the next model call reads neither them nor
   * the ids.
   */
  const expectCalls = (calls: ReadonlyArray<{ readonly id: ToolCallId; readonly provider_call_id: string }>) =>
    Effect.sync(() => {
      for (const call of calls) expected.set(call.id, call.provider_call_id)
      for (const [oldest] of expected) {
        if (expected.size <= MAX_EXPECTED_CALLS) break
        expected.delete(oldest)
      }
    })

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

  /** The model's view of the agent's timeline, brought up to date. */
  const catchUp = (agent: Agent, lastSequence: number | undefined) =>
    Effect.gen(function*() {
      const before = known.get(agent.id) ?? EMPTY_VIEW
      if (lastSequence !== undefined && before.last >= lastSequence) return before
      const fresh = yield* eventsAfter(agent, before.last)
      if (fresh.length === 0) return before
      const newCalls = fresh.flatMap((event) => event.event_kind === "tool_call" ? [event.tool_call_id] : [])
      const providerCallIds = newCalls.length === 0 ? NO_CALL_IDS : new Map(yield* toolCalls.providerCallIds(newCalls))
      const after = foldView(before, fresh, providerCallIds)
      remember(agent.id, after)
      return after
    })

  /**
   * The history of the agent as of now; with the last sequence of its timeline (read with the
   * agent), nothing is read when the view has reached it.
   */
  const of = (agent: Agent, lastSequence?: number): Effect.Effect<History> =>
    Effect.map(catchUp(agent, lastSequence), (view) => ({ view, conversation: conversationOf(view) }))

  return { of, expectCalls } as const
})

export class TurnHistory extends Context.Service<TurnHistory, Effect.Success<typeof make>>()("TurnHistory") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      Timeline.layer,
      ToolCallsRepository.layer
    ])
  )
}
