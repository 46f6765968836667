/**
 * The model's view of a timeline (Conversation.ts) folded in pieces equals the view folded at once:
 * what TurnHistory relies on when it reads only the events after the last one it has. Also what
 * the view shows while turns are queued, running, ended, cancelled with an open call, and compacted.
 */
import { describe, expect, it } from "@effect/vitest"
import { HashMap } from "effect"
import type { AgentEvent } from "../../src/domain/runtime/Events.ts"
import { conversationOf, EMPTY_VIEW, foldView, type ModelView } from "../../src/services/runtime/Conversation.ts"

const text = (value: string) => [{ type: "text" as const, text: value }]

/**
 * The agent's timeline: T1 with a tool call, T2 cancelled with a call open while T3 waits, a
 * compaction in T3, then T3 and T4 ending after it.
 */
const timeline: ReadonlyArray<AgentEvent> = [
  { event_kind: "agent_input", turn_id: "T1", content_blocks: text("first") },
  { event_kind: "turn", turn_id: "T1", turn_status: "started" },
  { event_kind: "model_output", turn_id: "T1", content_blocks: text("looking") },
  { event_kind: "tool_call", turn_id: "T1", tool_call_id: "c1", tool_name: "lookup", tool_input: { q: 1 } },
  { event_kind: "tool_result", turn_id: "T1", tool_call_id: "c1", outcome: "succeeded", content_blocks: text("found") },
  { event_kind: "model_output", turn_id: "T1", content_blocks: text("done") },
  { event_kind: "turn", turn_id: "T1", turn_status: "completed" },
  { event_kind: "agent_input", turn_id: "T2", content_blocks: text("second") },
  { event_kind: "turn", turn_id: "T2", turn_status: "started" },
  { event_kind: "agent_input", turn_id: "T3", content_blocks: text("third") },
  { event_kind: "tool_call", turn_id: "T2", tool_call_id: "c2", tool_name: "lookup", tool_input: { q: 2 } },
  { event_kind: "interaction", turn_id: "T2", interaction_status: "opened", content_blocks: [] },
  { event_kind: "control", turn_id: "T2", control_type: "cancel_current" },
  { event_kind: "turn", turn_id: "T2", turn_status: "cancelled" },
  { event_kind: "turn", turn_id: "T3", turn_status: "started" },
  { event_kind: "compaction", turn_id: "T3", compacted_through_sequence: 14, content_blocks: text("S") },
  { event_kind: "model_output", turn_id: "T3", content_blocks: text("answer") },
  { event_kind: "turn", turn_id: "T3", turn_status: "completed" },
  { event_kind: "agent_input", turn_id: "T4", content_blocks: text("fourth") },
  { event_kind: "turn", turn_id: "T4", turn_status: "started" },
  { event_kind: "model_output", turn_id: "T4", content_blocks: text("again") },
  { event_kind: "turn", turn_id: "T4", turn_status: "completed" }
].map((event, index) => ({ ...event, sequence: index + 1 }) as unknown as AgentEvent)

const providerIds = new Map([["c1", "p1"], ["c2", "p2"]])

/** The provider ids of the calls among `events`, as TurnHistory reads them. */
const idsOf = (events: ReadonlyArray<AgentEvent>) =>
  new Map(events.flatMap((event) => event.event_kind === "tool_call" ? [[event.tool_call_id, providerIds.get(event.tool_call_id)!] as const] : []))

const foldAll = (events: ReadonlyArray<AgentEvent>) => foldView(EMPTY_VIEW, events, idsOf(events))

/** What a model call on `view` is sent: its items, and the length of their JSON kept for the context estimate. */
const sent = (view: ModelView) => {
  const conversation = conversationOf(view)
  return { items: conversation.items.toArray(), jsonLength: conversation.jsonLength }
}

describe("the model's view", () => {
  it("folded in any two pieces equals folded at once, at every point of the timeline", () => {
    for (let end = 1; end <= timeline.length; end++) {
      const events = timeline.slice(0, end)
      const whole = foldAll(events)
      for (let cut = 0; cut <= end; cut++) {
        const first = foldAll(events.slice(0, cut))
        const second = foldView(first, events.slice(cut), idsOf(events.slice(cut)))
        expect(sent(second)).toEqual(sent(whole))
        // The length kept for the context estimate is the conversation's JSON's, as written out.
        const conversation = sent(second)
        expect(conversation.jsonLength).toBe(JSON.stringify(conversation.items).length)
        expect(second.last).toBe(end)
        expect(second.bytes).toBe(whole.bytes)
        // The first piece's view is not changed by the second fold.
        expect(sent(first)).toEqual(sent(foldAll(events.slice(0, cut))))
      }
    }
  })

  it("shows started turns with the provider's call ids, a cancelled call answered as failed, no queued input", () => {
    const beforeT3 = foldAll(timeline.slice(0, 14))
    expect(sent(beforeT3).items).toEqual([
      { type: "user_message", content: text("first") },
      { type: "assistant_text", text: "looking" },
      { type: "tool_call", call_id: "p1", name: "lookup", input: { q: 1 } },
      { type: "tool_result", call_id: "p1", outcome: "succeeded", content: text("found") },
      { type: "assistant_text", text: "done" },
      { type: "user_message", content: text("second") },
      { type: "tool_call", call_id: "p2", name: "lookup", input: { q: 2 } },
      { type: "tool_result", call_id: "p2", outcome: "failed", content: text("The tool call was cancelled before it produced a result.") }
    ])
    expect(beforeT3.ended.toArray().map((turn) => turn.endSequence)).toEqual([7, 14])
    expect(beforeT3.providerCallIds.size).toBe(0)
    // While T2 runs, its open call has no result yet.
    expect(sent(foldAll(timeline.slice(0, 11))).items.slice(-2)).toEqual([
      { type: "user_message", content: text("second") },
      { type: "tool_call", call_id: "p2", name: "lookup", input: { q: 2 } }
    ])
  })

  it("replaces the turns a compaction covers by its summary", () => {
    const view = foldAll(timeline.slice(0, 17))
    expect(view.ended.toArray()).toEqual([])
    expect(sent(view).items).toEqual([
      { type: "user_message", content: text("Summary of the earlier conversation:\nS") },
      { type: "user_message", content: text("third") },
      { type: "assistant_text", text: "answer" }
    ])
  })

  it("appends the turns that end after a compaction to its summary", () => {
    const view = foldAll(timeline)
    expect(view.ended.toArray().map((turn) => turn.endSequence)).toEqual([18, 22])
    expect(sent(view).items).toEqual([
      { type: "user_message", content: text("Summary of the earlier conversation:\nS") },
      { type: "user_message", content: text("third") },
      { type: "assistant_text", text: "answer" },
      { type: "user_message", content: text("fourth") },
      { type: "assistant_text", text: "again" }
    ])
    expect(HashMap.size(view.open)).toBe(0)
  })

  it("folds a backlog input by input, and forgets a withdrawn input's bytes with its turn", () => {
    // T1 runs while T2 to T101 queue behind it, one fold an input, as each input's commit is folded;
    // then each queued turn is withdrawn (cancelled before it started).
    const running = [
      { event_kind: "agent_input", turn_id: "T1", content_blocks: text("first") },
      { event_kind: "turn", turn_id: "T1", turn_status: "started" }
    ]
    const queued = Array.from({ length: 100 }, (_, index) => ({
      event_kind: "agent_input",
      turn_id: `T${index + 2}`,
      content_blocks: text(`queued ${index}`)
    }))
    const withdrawn = queued.map(({ turn_id }) => ({ event_kind: "turn", turn_id, turn_status: "cancelled" }))
    const events = [...running, ...queued, ...withdrawn].map((event, index) => ({ ...event, sequence: index + 1 }) as unknown as AgentEvent)
    const beforeBacklog = foldAll(events.slice(0, 2))
    let view = beforeBacklog
    for (const event of events.slice(2, 102)) view = foldView(view, [event], new Map())
    const whole = foldAll(events.slice(0, 102))
    expect(view.bytes).toBe(whole.bytes)
    expect(view.bytes).toBeGreaterThan(beforeBacklog.bytes)
    expect(HashMap.size(view.open)).toBe(101)
    // Queued inputs are not part of the conversation: only the running turn's input is sent.
    expect(sent(view)).toEqual(sent(beforeBacklog))
    for (const event of events.slice(102)) view = foldView(view, [event], new Map())
    expect(HashMap.size(view.open)).toBe(1)
    expect(view.bytes).toBe(beforeBacklog.bytes)
    expect(sent(view)).toEqual(sent(beforeBacklog))
  })

  it("keeps the turns that ended after what each compaction covers, folded in any pieces", () => {
    // T1 and T2 end; a compaction in T3 covers T1 only, one in T4 covers T2 as well.
    const compactions = [
      { event_kind: "agent_input", turn_id: "T1", content_blocks: text("one") },
      { event_kind: "turn", turn_id: "T1", turn_status: "started" },
      { event_kind: "model_output", turn_id: "T1", content_blocks: text("a1") },
      { event_kind: "turn", turn_id: "T1", turn_status: "completed" },
      { event_kind: "agent_input", turn_id: "T2", content_blocks: text("two") },
      { event_kind: "turn", turn_id: "T2", turn_status: "started" },
      { event_kind: "model_output", turn_id: "T2", content_blocks: text("a2") },
      { event_kind: "turn", turn_id: "T2", turn_status: "completed" },
      { event_kind: "agent_input", turn_id: "T3", content_blocks: text("three") },
      { event_kind: "turn", turn_id: "T3", turn_status: "started" },
      { event_kind: "compaction", turn_id: "T3", compacted_through_sequence: 4, content_blocks: text("S1") },
      { event_kind: "model_output", turn_id: "T3", content_blocks: text("a3") },
      { event_kind: "turn", turn_id: "T3", turn_status: "completed" },
      { event_kind: "agent_input", turn_id: "T4", content_blocks: text("four") },
      { event_kind: "turn", turn_id: "T4", turn_status: "started" },
      { event_kind: "compaction", turn_id: "T4", compacted_through_sequence: 8, content_blocks: text("S2") },
      { event_kind: "model_output", turn_id: "T4", content_blocks: text("a4") },
      { event_kind: "turn", turn_id: "T4", turn_status: "completed" }
    ].map((event, index) => ({ ...event, sequence: index + 1 }) as unknown as AgentEvent)
    const summary = (value: string) => ({ type: "user_message", content: text(`Summary of the earlier conversation:\n${value}`) })
    expect(sent(foldAll(compactions.slice(0, 13))).items).toEqual([
      summary("S1"),
      { type: "user_message", content: text("two") },
      { type: "assistant_text", text: "a2" },
      { type: "user_message", content: text("three") },
      { type: "assistant_text", text: "a3" }
    ])
    expect(sent(foldAll(compactions)).items).toEqual([
      summary("S2"),
      { type: "user_message", content: text("three") },
      { type: "assistant_text", text: "a3" },
      { type: "user_message", content: text("four") },
      { type: "assistant_text", text: "a4" }
    ])
    for (let end = 1; end <= compactions.length; end++) {
      const events = compactions.slice(0, end)
      const whole = foldAll(events)
      for (let first = 0; first <= end; first++) {
        for (let second = first; second <= end; second++) {
          const pieces = [events.slice(0, first), events.slice(first, second), events.slice(second)]
          const folded = pieces.reduce((view, piece) => foldView(view, piece, idsOf(piece)), EMPTY_VIEW)
          expect(sent(folded)).toEqual(sent(whole))
          expect(folded.bytes).toBe(whole.bytes)
          expect(folded.ended.toArray()).toEqual(whole.ended.toArray())
        }
      }
    }
  })
})
