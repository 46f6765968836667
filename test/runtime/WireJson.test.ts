/**
 * The request body's JSON is written from each format's fold over the items, kept per
 * ConversationItems (src/services/runtime/model/WireJson.ts). A conversation whose earlier items were written
 * at an earlier call sends the same body as the same conversation made of new objects (nothing kept):
 * checked for each format as the conversation grows call after call, with texts that JSON must
 * escape, and with Anthropic's cache breakpoint moving to the new last message.
 */
import { describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import { AnthropicMessages } from "../../src/services/runtime/model/AnthropicMessages.ts"
import { ConversationItems } from "../../src/services/runtime/model/ConversationItems.ts"
import type { ConversationItem, ModelRequest } from "../../src/services/runtime/model/ModelMessages.ts"
import { OpenAiChatCompletions } from "../../src/services/runtime/model/OpenAiChatCompletions.ts"
import { OpenAiResponses } from "../../src/services/runtime/model/OpenAiResponses.ts"
import type { WireAdapter } from "../../src/services/runtime/model/WireAdapter.ts"
import { appendedTo } from "../../src/services/runtime/model/WireJson.ts"

const text = (value: string) => [{ type: "text" as const, text: value }]

/** Texts JSON escapes: quotes, backslashes, control characters, line separators, astral and lone surrogates. */
const awkward = ["say \"hi\" \\ back", "line\nbreak\ttab\u0001", "\u2028 ✓ 😀", "lone \ud800 high", "\udc00 lone low"]

/** A conversation's turns, each a few items; every turn ends with what a later call sends after it. */
const turns: ReadonlyArray<ReadonlyArray<ConversationItem>> = [
  [
    { type: "user_message", content: text(awkward[0]) },
    { type: "assistant_reasoning", summary: "thinking", replay: { api_format: "anthropic-messages", kind: "signature", data: "sig" } },
    { type: "assistant_text", text: awkward[1] },
    { type: "assistant_text", text: awkward[2] },
    { type: "tool_call", call_id: "call_1", name: "lookup", input: { q: awkward[3] } },
    { type: "tool_result", call_id: "call_1", outcome: "succeeded", content: text(awkward[4]) }
  ],
  [
    { type: "assistant_text", text: "found it" },
    { type: "user_message", content: [...text("second"), ...text(awkward[2])] }
  ],
  [
    { type: "tool_call", call_id: "call_2", name: "lookup", input: { q: 2 } },
    { type: "tool_result", call_id: "call_2", outcome: "failed", content: text("no such thing") },
    { type: "assistant_text", text: "nothing found" },
    { type: "assistant_reasoning", summary: "", replay: { api_format: "anthropic-messages", kind: "redacted", data: "r" } }
  ]
]

const requestOf = (adapter: WireAdapter, conversation: ConversationItems): ModelRequest => ({
  apiFormat: adapter === AnthropicMessages
    ? "anthropic-messages"
    : adapter === OpenAiResponses
    ? "openai-responses"
    : "openai-chat-completions",
  baseUrl: "http://127.0.0.1:1/v1",
  apiKey: Redacted.make("sk-test"),
  model: "m",
  instruction: "Be brief.",
  conversation,
  tools: [{ name: "lookup", description: "Looks up", input_schema: { type: "object" } }],
  maxOutputTokens: undefined,
  reasoningEffort: undefined,
  conversationKey: "agent_1",
  cacheRetention: "short"
})

/** The body of a call with `conversation`, as text. */
const bodyOf = (adapter: WireAdapter, conversation: ConversationItems, stream = true) =>
  Buffer.concat(adapter.body(requestOf(adapter, conversation), stream)).toString("utf8")

/** The same conversation made of new objects: nothing kept for it. */
const fresh = (conversation: ConversationItems) => ConversationItems.of(structuredClone(conversation.toArray()))

/** `settled`, then `more`, as a call's conversation. */
const callOn = (settled: ConversationItems, more: ReadonlyArray<ConversationItem>) => {
  const conversation = settled.then(structuredClone(more))
  appendedTo(conversation, settled, false)
  return conversation
}

/** `settled`, then `more`, as a view's next settled items. */
const settle = (settled: ConversationItems, more: ReadonlyArray<ConversationItem>) => {
  const next = settled.settledWith(structuredClone(more))
  appendedTo(next, settled, true)
  return next
}

/**
 * Turns of long texts, with characters of one to four bytes in UTF-8 and some JSON escapes: their
 * JSON fills several of the chunks a fold's settled bytes are kept in, the first ones of 1 to 32
 * KiB, the rest of 64 KiB (WireJson.ts), and characters fall across the chunks' ends.
 */
const longTurns: ReadonlyArray<ReadonlyArray<ConversationItem>> = Array.from({ length: 40 }, (_, index) => [
  { type: "user_message", content: text(`${index} ${"é€😀 \"quoted\"\n".repeat(300 + index)}`) },
  { type: "assistant_text", text: `${index} ${"an answer ".repeat(500 + index)}` }
])

/**
 * Runs the turns as a view keeps them (Conversation.ts): at a call, the settled items and then the
 * running turn's, made again; at the turn's end, the next settled items made from the last ones.
 * `calls` says after which turns' starts a call is made: the others' settled items are never sent.
 */
const callBodies = (adapter: WireAdapter, calls: (turn: number) => boolean, conversationTurns = turns) => {
  const bodies: Array<{ readonly kept: string; readonly fresh: string }> = []
  let settled = ConversationItems.empty
  for (const [index, turn] of conversationTurns.entries()) {
    if (calls(index)) {
      const conversation = callOn(settled, turn)
      bodies.push({ kept: bodyOf(adapter, conversation), fresh: bodyOf(adapter, fresh(conversation)) })
    }
    settled = settle(settled, turn)
  }
  return bodies
}

describe("the request body written from kept JSON", () => {
  for (const adapter of [OpenAiResponses, AnthropicMessages, OpenAiChatCompletions]) {
    it(`${adapter.path}: equals the body of the same conversation made of new objects, call after call`, () => {
      for (const calls of [() => true, (turn: number) => turn === turns.length - 1, (turn: number) => turn !== 1]) {
        const bodies = callBodies(adapter, calls)
        expect(bodies.length).toBeGreaterThan(0)
        for (const { fresh, kept } of bodies) {
          expect(kept).toBe(fresh)
          expect(JSON.parse(kept)).toBeTypeOf("object")
        }
      }
    })

    it(`${adapter.path}: two arrays made from one each resume from their own past, call after call`, () => {
      const base = ConversationItems.of(turns[0])
      bodyOf(adapter, base)
      const views = [turns[1], turns[2]].map((turn) => settle(base, turn))
      for (let round = 0; round < 2; round++) {
        for (const settled of views) {
          const conversation = callOn(settled, [{ type: "user_message", content: text(`again ${round}`) }])
          expect(bodyOf(adapter, conversation)).toBe(bodyOf(adapter, fresh(conversation)))
        }
      }
    })

    it(`${adapter.path}: a conversation of many chunks, call after call, and two views made from one`, () => {
      for (const calls of [() => true, (turn: number) => turn % 7 === 6]) {
        for (const { fresh, kept } of callBodies(adapter, calls, longTurns)) expect(kept).toBe(fresh)
      }
      // The base's bytes (its items' JSON lines, and each format's JSON) end inside a chunk; each
      // view appends past them in turn, so that the one appending after the other has written
      // takes a copy of that chunk.
      const base = settle(ConversationItems.of(longTurns.slice(0, 12).flat()), longTurns[12])
      bodyOf(adapter, base)
      let views = [longTurns.slice(13, 26), longTurns.slice(26, 39)].map((more) => ({ settled: base, more }))
      for (let round = 0; round < 13; round++) {
        views = views.map(({ more, settled }) => {
          const next = settle(settled, more[round])
          const conversation = callOn(next, [{ type: "user_message", content: text(`round ${round}`) }])
          expect(bodyOf(adapter, conversation)).toBe(bodyOf(adapter, fresh(conversation)))
          return { more, settled: next }
        })
      }
    })

    it(`${adapter.path}: a call's running items are not kept into the next call's`, () => {
      // The settled items end with an assistant's text, which the first call's items join.
      const settled = ConversationItems.of([...turns[0], { type: "assistant_text", text: "found it" }])
      const first = callOn(settled, [{ type: "assistant_text", text: "and more" }, ...turns[2]])
      const second = callOn(settled, turns[1])
      expect(bodyOf(adapter, first)).toBe(bodyOf(adapter, fresh(first)))
      expect(bodyOf(adapter, second)).toBe(bodyOf(adapter, fresh(second)))
    })
  }

  it("anthropic: the breakpoint is on the last message's last block that is not thinking, at every call", () => {
    let conversation: ReadonlyArray<ConversationItem> = []
    const marked: Array<ReadonlyArray<string>> = []
    for (const turn of turns) {
      conversation = [...conversation, ...turn]
      const body = JSON.parse(bodyOf(AnthropicMessages, ConversationItems.of(conversation), false))
      marked.push(
        body.messages.flatMap((message: { content: ReadonlyArray<{ type: string; cache_control?: unknown }> }) =>
          message.content.filter((block) => block.cache_control !== undefined).map((block) => block.type)
        )
      )
    }
    // The third call's last message ends with a redacted thinking block: the breakpoint is on the text before it.
    expect(marked).toEqual([["tool_result"], ["text"], ["text"]])
  })

  it("openai-chat-completions: an assistant's texts are joined by a blank line", () => {
    const body = JSON.parse(bodyOf(OpenAiChatCompletions, ConversationItems.of(turns[0]), false))
    expect(body.messages[2]).toEqual({
      role: "assistant",
      content: `${awkward[1]}\n\n${awkward[2]}`,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: JSON.stringify({ q: awkward[3] }) } }]
    })
  })
})
