/**
 * The model's view of an agent's timeline (docs/runtime.md, "The model request"): the turns that
 * have started, in the order they ran, each as its input, the model's output, its tool calls and
 * their results; turns covered by the latest compaction are replaced by its summary. Queued and
 * withdrawn inputs are not part of it. A tool call left without a result (its turn was cancelled)
 * gets a failed result saying so, because every provider wants each call answered.
 *
 * Made by folding the events in, in sequence order (`foldView`), so that a process can keep it and
 * add only what is new (TurnHistory.ts). A turn's items are made once, when it ends: nothing
 * the model reads is appended to a turn after its end (its open tool calls are cancelled and its
 * interactions closed with it), so only the turns still running keep their events.
 */
import type { AgentEvent, EventOf } from "../../domain/runtime/Events.ts"
import type { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import { HashMap, Option, Schema } from "effect"
import { arrayLength, itemLength } from "./ContextBudget.ts"
import { type ConversationItem, type ModelContentBlock, ReasoningReplay } from "./model/ModelMessages.ts"
import { type EndedTurn, EndedTurns } from "./EndedTurns.ts"
import { ConversationItems } from "./model/ConversationItems.ts"
import { appendedTo } from "./model/WireJson.ts"

const isReasoningReplay = Schema.is(ReasoningReplay)

/** The metadata key under which a reasoning summary block keeps what its provider needs replayed. */
export const REPLAY_METADATA_KEY = "provider_replay"

const SUMMARY_PREFIX = "Summary of the earlier conversation:\n"

const CANCELLED_RESULT = "The tool call was cancelled before it produced a result."

/** The content blocks the model is sent (a reasoning summary is replayed as an item of its own, or not at all). */
type SentBlock = Exclude<ContentBlock, { readonly type: "reasoning_summary" }>

/**
 * Content blocks as the model reads them: media are described, not sent. Made by `map`, whose
 * array is as long as its elements (one grown by `push` keeps room for 17; the history cache keeps
 * these arrays).
 */
const modelBlocks = (blocks: ReadonlyArray<ContentBlock>): ReadonlyArray<ModelContentBlock> =>
  blocks.filter((block): block is SentBlock => block.type !== "reasoning_summary").map((block): ModelContentBlock => {
    switch (block.type) {
      case "text":
        return { type: "text", text: block.text }
      case "media_ref":
        return { type: "text", text: `[attached ${block.media_type}, ${block.size_bytes} bytes, artifact ${block.artifact_id}]` }
    }
  })

const replayOf = (block: ContentBlock): ReasoningReplay | undefined => {
  const replay = block.metadata?.[REPLAY_METADATA_KEY]
  return isReasoningReplay(replay) ? replay : undefined
}

/** The events of a turn the model reads. */
type ContentEvent = EventOf<"agent_input" | "model_output" | "tool_call" | "tool_result">

/** A turn that has not ended: queued (its input only) or running. */
interface OpenTurn {
  readonly started: boolean
  readonly events: ReadonlyArray<ContentEvent>
  readonly bytes: number
}

/** The model's view of an agent's timeline up to an event; never changed once made (a fold makes a new one). */
export interface ModelView {
  /** The sequence of the last event folded in (0: none). */
  readonly last: number
  /** The latest compaction's summary, if any. */
  readonly summary: ConversationItem | undefined
  /**
   * The turns that ended after the compaction, in the order they ran: where each ended, and what
   * its conversation items (never changed again) take of the settled items, which hold them.
   */
  readonly ended: EndedTurns
  /** The summary's and the ended turns' items, in order. */
  readonly settled: ConversationItems
  /** About what `settled` holds in memory, in bytes. */
  readonly settledBytes: number
  /**
   * The settled items' JSON lengths added up (ContextBudget.itemLength), kept as turns end: a
   * model call's context estimate measures what is new, not every item of the past again.
   */
  readonly settledItemsLength: number
  /**
   * Turns with an input and no end yet, by turn id: a persistent map, so that a fold that queues
   * an input (the backlog holds up to 100) neither copies nor walks the others.
   */
  readonly open: HashMap.HashMap<string, OpenTurn>
  /** The ids the provider gave the open turns' tool calls, by call id. */
  readonly providerCallIds: ReadonlyMap<string, string>
  /** About what the view holds in memory, in bytes. */
  readonly bytes: number
}

export const EMPTY_VIEW: ModelView = {
  last: 0,
  summary: undefined,
  ended: EndedTurns.empty,
  settled: ConversationItems.empty,
  settledBytes: 0,
  settledItemsLength: 0,
  open: HashMap.empty(),
  providerCallIds: new Map(),
  bytes: 0
}

/**
 * What an item or an event holds besides its text, in bytes (about). An ended turn's item, kept as
 * a line of JSON (ConversationItems.ts) with its share of the turn's place in the view, and as its
 * JSON in the settled bytes of the model call's format, measured 200 to 230 bytes of heap and
 * buffers after a full collection besides its text (`npm run bench -- history-memory`;
 * docs/performance-record.md, "The history cache's items as JSON"); a decoded event's fields 1 KiB.
 */
const ITEM_OVERHEAD_BYTES = 210
const EVENT_OVERHEAD_BYTES = 1024

const sum = <A>(values: Iterable<A>, f: (value: A) => number) => {
  let total = 0
  for (const value of values) total += f(value)
  return total
}

/** The text of content blocks, in bytes (a media reference holds none). */
const textBytes = (blocks: ReadonlyArray<ContentBlock>) => sum(blocks, (block) => block.type === "media_ref" ? 0 : block.text.length)

/** The text an item holds, in bytes. */
const itemTextBytes = (item: ConversationItem): number => {
  switch (item.type) {
    case "user_message":
    case "tool_result":
      return sum(item.content, (block) => block.text.length)
    case "assistant_text":
      return item.text.length
    case "assistant_reasoning":
      return item.summary.length + (item.replay?.data.length ?? 0)
    case "tool_call":
      return item.name.length + JSON.stringify(item.input).length
  }
}

/**
 * An item with its text twice: in its own line of JSON (ConversationItems.ts), and in its JSON in
 * the model call's fold over the settled items (WireJson.ts), both kept as bytes.
 */
const itemBytes = (item: ConversationItem): number => ITEM_OVERHEAD_BYTES + 2 * itemTextBytes(item)

const eventBytes = (event: ContentEvent): number =>
  EVENT_OVERHEAD_BYTES + (event.event_kind === "tool_call" ? JSON.stringify(event.tool_input).length : textBytes(event.content_blocks))

/** The conversation items of one turn's events; a turn that has ended answers its unanswered calls as cancelled. */
const itemsOf = (
  events: ReadonlyArray<ContentEvent>,
  ended: boolean,
  providerCallIds: ReadonlyMap<string, string>
): Array<ConversationItem> => {
  const items: Array<ConversationItem> = []
  const unanswered = new Map<string, string>()
  for (const event of events) {
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
    }
  }
  if (ended) {
    for (const callId of unanswered.values()) {
      items.push({ type: "tool_result", call_id: callId, outcome: "failed", content: [{ type: "text", text: CANCELLED_RESULT }] })
    }
  }
  return items
}

const summaryOf = (compaction: EventOf<"compaction">): ConversationItem => ({
  type: "user_message",
  content: [{
    type: "text",
    text: SUMMARY_PREFIX + compaction.content_blocks.map((block) => block.type === "text" ? block.text : "").join("\n")
  }]
})

/** The provider ids without those of these events' tool calls: a copy when there are any (a view's are never changed). */
const withoutCallsOf = (callIds: ReadonlyMap<string, string>, events: ReadonlyArray<ContentEvent>): ReadonlyMap<string, string> => {
  let remaining: Map<string, string> | undefined
  for (const event of events) {
    if (event.event_kind !== "tool_call") continue
    remaining ??= new Map(callIds)
    remaining.delete(event.tool_call_id)
  }
  return remaining ?? callIds
}

/**
 * The view with `events` folded in: the agent's events after `view.last`, in sequence order, and
 * the ids the provider gave their tool calls.
 */
export const foldView = (
  view: ModelView,
  events: ReadonlyArray<AgentEvent>,
  providerCallIds: ReadonlyMap<string, string>
): ModelView => {
  if (events.length === 0) return view
  let summary = view.summary
  /** After a compaction in this fold: the summary, then the items of the turns that ended after what it covers. */
  let compacted: Array<ConversationItem> | undefined
  let ended = view.ended
  /** Turns that ended in this fold (after any compaction in it), and their items in order. */
  const justEnded: Array<EndedTurn> = []
  const justEndedItems: Array<ConversationItem> = []
  let open = view.open
  /** What the open turns hold, in bytes: the view's, changed by each event folded in. */
  let openBytes = view.bytes - view.settledBytes
  // The view's own when nothing changes them (a queued input's fold, say).
  let callIds = providerCallIds.size === 0 ? view.providerCallIds : new Map([...view.providerCallIds, ...providerCallIds])
  for (const event of events) {
    if (event.event_kind === "compaction") {
      summary = summaryOf(event)
      const through = event.compacted_through_sequence
      // Turns end in sequence order, so those after what the compaction covers are the last ones,
      // and their items the last of the settled items so far.
      ended = ended.appended(justEnded).endingAfter(through)
      const settledSoFar = [...(compacted ?? view.settled.toArray()), ...justEndedItems]
      compacted = [summary, ...settledSoFar.slice(settledSoFar.length - ended.itemCount)]
      justEnded.length = 0
      justEndedItems.length = 0
      continue
    }
    if (event.turn_id === null) continue
    const turn = Option.getOrUndefined(HashMap.get(open, event.turn_id))
    switch (event.event_kind) {
      case "turn": {
        if (event.turn_status === "started") {
          open = HashMap.set(open, event.turn_id, { started: true, events: turn?.events ?? [], bytes: turn?.bytes ?? 0 })
          break
        }
        if (turn === undefined) break
        open = HashMap.remove(open, event.turn_id)
        openBytes -= turn.bytes
        if (turn.started) {
          const items = itemsOf(turn.events, true, callIds)
          justEnded.push({ endSequence: event.sequence, itemCount: items.length, bytes: sum(items, itemBytes) })
          justEndedItems.push(...items)
        }
        callIds = withoutCallsOf(callIds, turn.events)
        break
      }
      case "agent_input":
      case "model_output":
      case "tool_call":
      case "tool_result": {
        const bytes = eventBytes(event)
        open = HashMap.set(open, event.turn_id, {
          started: turn?.started ?? false,
          events: [...(turn?.events ?? []), event],
          bytes: (turn?.bytes ?? 0) + bytes
        })
        openBytes += bytes
        break
      }
    }
  }
  const settled = settledAfter(view, compacted, ended, justEnded, justEndedItems)
  return {
    last: events[events.length - 1].sequence,
    summary,
    ended: ended.appended(justEnded),
    ...settled,
    open,
    providerCallIds: callIds,
    bytes: settled.settledBytes + openBytes
  }
}

/**
 * The settled items after a fold: the view's, or those a compaction in the fold left (the summary
 * and the `ended` turns' items), with the items of the turns that just ended appended (one copy of
 * the array; the past's items are not made again).
 */
const settledAfter = (
  view: ModelView,
  compacted: ReadonlyArray<ConversationItem> | undefined,
  ended: EndedTurns,
  justEnded: ReadonlyArray<EndedTurn>,
  justEndedItems: ReadonlyArray<ConversationItem>
): Pick<ModelView, "settled" | "settledBytes" | "settledItemsLength"> => {
  const appendedBytes = sum(justEnded, (turn) => turn.bytes)
  if (compacted === undefined) {
    if (justEnded.length === 0) {
      return { settled: view.settled, settledBytes: view.settledBytes, settledItemsLength: view.settledItemsLength }
    }
    const settled = view.settled.settledWith(justEndedItems)
    // What the model call's format kept for the view's items is extended with the new ones only.
    appendedTo(settled, view.settled, true)
    return {
      settled,
      settledBytes: view.settledBytes + appendedBytes,
      settledItemsLength: view.settledItemsLength + sum(justEndedItems, itemLength)
    }
  }
  const items = compacted.concat(justEndedItems)
  const bytes = itemBytes(compacted[0]) + ended.bytes + appendedBytes
  return { settled: ConversationItems.of(items), settledBytes: bytes, settledItemsLength: sum(items, itemLength) }
}

/** The conversation a model call sends, with the length of its JSON. */
export interface ModelConversation {
  readonly items: ConversationItems
  /** `JSON.stringify(items).length`, from the settled items' kept lengths and the running turns' items. */
  readonly jsonLength: number
}

/** The conversation the model is sent: the settled items, then the running turns' (in the order they started). */
export const conversationOf = (view: ModelView): ModelConversation => {
  const running = [...view.open].filter(([, turn]) => turn.started).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
  if (running.length === 0) return { items: view.settled, jsonLength: arrayLength(view.settled.length, view.settledItemsLength) }
  const runningItems = running.flatMap(([, turn]) => itemsOf(turn.events, false, view.providerCallIds))
  const items = view.settled.then(runningItems)
  appendedTo(items, view.settled, false)
  return { items, jsonLength: arrayLength(items.length, view.settledItemsLength + sum(runningItems, itemLength)) }
}
