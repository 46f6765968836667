/**
 * The conversation of a summary request (SummaryInput.ts): whole when it fits; else items cut to
 * half the room and the newest kept, after a note on how many were left out; always within the
 * budget, and never with half of a surrogate pair.
 */
import { describe, expect, it } from "vitest"
import { budgetOf, conversationLength, estimateInputTokens } from "../../src/services/runtime/ContextBudget.ts"
import type { ConversationItem } from "../../src/services/runtime/model/ModelMessages.ts"
import { summaryConversation } from "../../src/services/runtime/SummaryInput.ts"

const INSTRUCTION = "Summarize."
const REQUEST: ConversationItem = { type: "user_message", content: [{ type: "text", text: "Summarize the conversation above." }] }
const budget = budgetOf(2000, 200)

const user = (text: string): ConversationItem => ({ type: "user_message", content: [{ type: "text", text }] })
const answer = (text: string): ConversationItem => ({ type: "assistant_text", text })

const fits = (conversation: ReadonlyArray<ConversationItem>) =>
  estimateInputTokens({ instruction: INSTRUCTION, tools: [] }, conversationLength(conversation)) <= budget.input

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

describe("a summary request's conversation", () => {
  it("is the history and the request when they fit", () => {
    const items = [user("apples"), answer("noted")]
    expect(summaryConversation(items, REQUEST, INSTRUCTION, budget)).toEqual([...items, REQUEST])
  })

  it("keeps the newest items that fit, after a note saying how many earlier ones were left out", () => {
    const items = Array.from({ length: 60 }, (_, i) => i % 2 === 0 ? user(`question ${i} ${"x".repeat(400)}`) : answer(`answer ${i}`))
    const conversation = summaryConversation(items, REQUEST, INSTRUCTION, budget)
    expect(fits(conversation)).toBe(true)
    expect(conversation.at(-1)).toEqual(REQUEST)
    expect(conversation.at(-2)).toEqual(items.at(-1))
    const kept = conversation.length - 2
    expect(kept).toBeGreaterThan(5)
    expect(conversation[0]).toEqual(user(
      `[The ${items.length - kept} earliest items of this conversation are left out: they do not fit the model's context window.]`
    ))
    expect(conversation.slice(1, -1)).toEqual(items.slice(items.length - kept))
  })

  it("cuts an item larger than half the room to its beginning and end, without splitting a surrogate pair", () => {
    const huge = `start ${"😀".repeat(20_000)} end`
    const items = [user("first"), answer("ok"), user(huge), answer("too long")]
    const conversation = summaryConversation(items, REQUEST, INSTRUCTION, budget)
    expect(fits(conversation)).toBe(true)
    expect(conversation.slice(0, 2)).toEqual(items.slice(0, 2))
    const cut = (conversation[2] as { readonly content: ReadonlyArray<{ readonly text: string }> }).content[0].text
    expect(cut.startsWith("start 😀")).toBe(true)
    expect(cut.endsWith("😀 end")).toBe(true)
    expect(cut).toMatch(/\[… \d+ characters left out here: the message does not fit the model's context window …\]/)
    expect(LONE_SURROGATE.test(cut)).toBe(false)
  })

  it("leaves out a tool call's input that is too large, keeping the call", () => {
    const call: ConversationItem = { type: "tool_call", call_id: "call_1", name: "write_file", input: { content: "y".repeat(50_000) } }
    const conversation = summaryConversation([user("write it"), call], REQUEST, INSTRUCTION, budget)
    expect(fits(conversation)).toBe(true)
    expect(conversation[1]).toMatchObject({
      type: "tool_call",
      call_id: "call_1",
      name: "write_file",
      input: { left_out: expect.stringContaining("does not fit the model's context window") }
    })
  })
})
