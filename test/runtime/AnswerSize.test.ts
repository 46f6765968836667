/**
 * What the stream decoders hold of items not yet whole counts in the answer's size
 * (src/services/runtime/model/AnswerSize.ts; docs/model-adapters.md, "Bounds"), as it comes, and
 * is given back once the item is an event (which the fold counts). The whole calls, over HTTP, are
 * in test/runtime/HostileProvider.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { ITEM_BYTES } from "../../src/services/runtime/model/AnswerSize.ts"
import { AnthropicMessages } from "../../src/services/runtime/model/AnthropicMessages.ts"
import { MAX_TOOL_CALLS_PER_ANSWER } from "../../src/services/runtime/model/ModelCallLimits.ts"
import { type ModelEvent, ResponseFold } from "../../src/services/runtime/model/ModelMessages.ts"
import { OpenAiChatCompletions } from "../../src/services/runtime/model/OpenAiChatCompletions.ts"
import type { WireAdapter } from "../../src/services/runtime/model/WireAdapter.ts"

/** A decoder of `adapter` whose events are folded: `feed` one SSE event (name, JSON data). */
const folded = (adapter: WireAdapter) => {
  const fold = new ResponseFold()
  const decode = adapter.streamDecoder(fold.size)
  const feed = (event: string, data: unknown): ReadonlyArray<ModelEvent> => {
    const decoded = decode({ event, data: typeof data === "string" ? data : JSON.stringify(data) })
    if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
    for (const each of decoded.success) fold.add(each)
    return decoded.success
  }
  return { fold, size: fold.size, feed }
}

const chatCall = (call: Record<string, unknown>) => ({ choices: [{ index: 0, delta: { tool_calls: [call] } }] })

describe("the answer's size counts what the adapters hold", () => {
  it("openai-chat-completions: a call's id, name and arguments as they come, given back to the fold's count at the end", () => {
    const { feed, fold, size } = folded(OpenAiChatCompletions)
    feed("", chatCall({ index: 0, id: "call_1", function: { name: "look", arguments: "" } }))
    expect(size).toMatchObject({ bytes: ITEM_BYTES + "call_1look".length, toolCalls: 1 })
    feed("", chatCall({ index: 0, function: { arguments: '{"q":"' + "é".repeat(1000) } }))
    feed("", chatCall({ index: 0, function: { arguments: '"}' } }))
    expect(size.bytes).toBe(ITEM_BYTES + "call_1look".length + '{"q":""}'.length + 2000)
    feed("", "[DONE]")
    // The fold's count of the call: its id, name and input as JSON, and the item.
    expect(size).toMatchObject({ bytes: ITEM_BYTES + "call_1look".length + '{"q":""}'.length + 2000, toolCalls: 1 })
    expect(fold.result().output).toEqual([{ type: "tool_call", call_id: "call_1", name: "look", input: { q: "é".repeat(1000) } }])
  })

  it(`openai-chat-completions: calls begun count as they begin (${MAX_TOOL_CALLS_PER_ANSWER + 1} before the end)`, () => {
    const { feed, size } = folded(OpenAiChatCompletions)
    for (let index = 0; index <= MAX_TOOL_CALLS_PER_ANSWER; index++) feed("", chatCall({ index, id: `c${index}`, function: { name: "x" } }))
    expect(size.toolCalls).toBe(MAX_TOOL_CALLS_PER_ANSWER + 1)
    expect(size.passed()).toBe("tool calls")
  })

  it("anthropic-messages: a tool_use block's input and a thinking block's signature count until their stop; a block begun again is dropped", () => {
    const { feed, fold, size } = folded(AnthropicMessages)
    feed("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } })
    feed("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "s".repeat(500) } })
    expect(size).toMatchObject({ bytes: ITEM_BYTES + "thinking".length + 500, toolCalls: 0 })
    feed("content_block_stop", { type: "content_block_stop", index: 0 })
    expect(size).toMatchObject({ bytes: ITEM_BYTES + 500, toolCalls: 0 })
    const start = { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t1", name: "look", input: {} } }
    feed("content_block_start", start)
    feed("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "x".repeat(300) } })
    expect(size).toMatchObject({ bytes: 2 * ITEM_BYTES + 500 + "tool_uset1look".length + 300, toolCalls: 1 })
    feed("content_block_start", start)
    expect(size).toMatchObject({ bytes: 2 * ITEM_BYTES + 500 + "tool_uset1look".length, toolCalls: 1 })
    feed("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"q":1}' } })
    feed("content_block_stop", { type: "content_block_stop", index: 1 })
    expect(size).toMatchObject({ bytes: 2 * ITEM_BYTES + 500 + "t1look".length + '{"q":1}'.length, toolCalls: 1 })
    expect(fold.result().output.map((item) => item.type)).toEqual(["assistant_reasoning", "tool_call"])
  })

  it("anthropic-messages: blocks begun and never stopped count, empty ones too", () => {
    const { feed, size } = folded(AnthropicMessages)
    for (let index = 0; index <= MAX_TOOL_CALLS_PER_ANSWER; index++) {
      feed("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: "", name: "" } })
    }
    expect(size.passed()).toBe("tool calls")
    const thinking = folded(AnthropicMessages)
    const blocks = Math.ceil((8 * 1024 * 1024) / (ITEM_BYTES + "thinking".length)) + 1
    for (let index = 0; index < blocks; index++) {
      thinking.feed("content_block_start", { type: "content_block_start", index, content_block: { type: "thinking" } })
    }
    expect(thinking.size.passed()).toBe("bytes")
  })
})
