/**
 * The events a stream sends one of per token are decoded with `Nullish` fields (ProviderJson.ts):
 * what a provider sends as null there must read as if it were left out, as everywhere else. Real
 * OpenAI chunks carry `"usage": null` and `"finish_reason": null` on every chunk but the last; some
 * compatible routes send `null` for any field they do not fill.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { AnswerSize } from "../../src/services/runtime/model/AnswerSize.ts"
import { AnthropicMessages } from "../../src/services/runtime/model/AnthropicMessages.ts"
import type { ModelEvent } from "../../src/services/runtime/model/ModelMessages.ts"
import { OpenAiChatCompletions } from "../../src/services/runtime/model/OpenAiChatCompletions.ts"
import { OpenAiResponses } from "../../src/services/runtime/model/OpenAiResponses.ts"
import type { WireAdapter } from "../../src/services/runtime/model/WireAdapter.ts"

/** The events a decoder makes of `events` (SSE name, JSON data), failing the test on a decoding error. */
const decodeAll = (adapter: WireAdapter, events: ReadonlyArray<readonly [string, unknown]>): Array<ModelEvent> => {
  const decode = adapter.streamDecoder(new AnswerSize())
  return events.flatMap(([event, data]) => {
    const decoded = decode({ event, data: typeof data === "string" ? data : JSON.stringify(data) })
    if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
    return decoded.success
  })
}

describe("stream events with null fields", () => {
  it("openai-chat-completions: null usage, finish_reason, content, reasoning and tool call fields", () => {
    const events = decodeAll(OpenAiChatCompletions, [
      ["", { choices: [{ index: 0, delta: { role: "assistant", content: null, refusal: null, reasoning_content: null, reasoning: null, tool_calls: null }, finish_reason: null }], usage: null, error: null }],
      ["", { choices: [{ index: 0, delta: { content: "Hel", reasoning: null }, finish_reason: null }], usage: null }],
      ["", { choices: [{ index: 0, delta: { content: "lo", tool_calls: [{ index: null, id: "call_1", function: { name: "look", arguments: null } }] }, finish_reason: null }], usage: null }],
      ["", { choices: [{ index: 0, delta: { content: null, tool_calls: [{ index: 0, id: null, function: { name: null, arguments: "{\"q\":1}" } }] }, finish_reason: null }], usage: null }],
      ["", { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }], usage: null }],
      ["", { choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, prompt_tokens_details: null } }],
      ["", "[DONE]"]
    ])
    expect(events).toEqual([
      { type: "text_delta", text: "Hel" },
      { type: "text_delta", text: "lo" },
      { type: "tool_call", call_id: "call_1", name: "look", input: { q: 1 } },
      { type: "usage", usage: { input_tokens: 5, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0 } },
      { type: "done", stop_reason: "tool_calls" }
    ])
  })

  it("openai-responses: a null delta is an empty piece of text", () => {
    const events = decodeAll(OpenAiResponses, [
      ["response.output_text.delta", { type: "response.output_text.delta", delta: "Hi" }],
      ["response.output_text.delta", { type: "response.output_text.delta", delta: null }],
      ["response.reasoning_summary_text.delta", { type: null, delta: "so" }]
    ])
    expect(events).toEqual([
      { type: "text_delta", text: "Hi" },
      { type: "text_delta", text: "" },
      { type: "reasoning_delta", text: "so" }
    ])
  })

  it("anthropic-messages: null delta fields and a null index", () => {
    const events = decodeAll(AnthropicMessages, [
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "look", input: {} } }],
      ["content_block_delta", { type: "content_block_delta", index: null, delta: { type: "input_json_delta", partial_json: "{\"q\":" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: null, text: null } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "2}" } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }],
      ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: null } }],
      ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "ok" } }]
    ])
    expect(events).toEqual([
      { type: "tool_call", call_id: "toolu_1", name: "look", input: { q: 2 } },
      { type: "text_delta", text: "" },
      { type: "text_delta", text: "ok" }
    ])
  })
})
