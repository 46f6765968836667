/**
 * `openai-responses`: POST {base_url}/responses. Stateless (`store: false`): the whole history
 * is sent each call, reasoning comes back encrypted (`include: ["reasoning.encrypted_content"]`)
 * and is replayed with its summary. docs/model-adapters.md.
 */
import type { ConversationItem, ModelEvent, ModelRequest, StopReason, Usage } from "./ModelMessages.ts"
import { ModelProviderError, parseToolInput, toolResultText } from "./ModelMessages.ts"
import type { SseEvent, WireAdapter } from "./WireAdapter.ts"
import { arrayAt, at, bearer, numberAt, parseJson, stringAt } from "./WireAdapter.ts"

const inputItem = (item: ConversationItem): ReadonlyArray<Record<string, unknown>> => {
  switch (item.type) {
    case "user_message":
      return [{ role: "user", content: item.content.map((block) => ({ type: "input_text", text: block.text })) }]
    case "assistant_text":
      return [{ type: "message", role: "assistant", content: [{ type: "output_text", text: item.text, annotations: [] }] }]
    case "assistant_reasoning":
      return item.replay?.api_format === "openai-responses" && item.replay.kind === "encrypted_content"
        ? [{
          type: "reasoning",
          summary: item.summary === "" ? [] : [{ type: "summary_text", text: item.summary }],
          encrypted_content: item.replay.data
        }]
        : []
    case "tool_call":
      return [{ type: "function_call", call_id: item.call_id, name: item.name, arguments: JSON.stringify(item.input) }]
    case "tool_result":
      return [{ type: "function_call_output", call_id: item.call_id, output: toolResultText(item) }]
  }
}

const reasoningEnabled = (request: ModelRequest) =>
  request.reasoningEffort !== undefined && request.reasoningEffort !== "none"

const body = (request: ModelRequest, stream: boolean): Record<string, unknown> => ({
  model: request.model,
  instructions: request.instruction,
  input: request.conversation.flatMap(inputItem),
  ...(request.tools.length > 0
    ? {
      tools: request.tools.map((tool) => ({
        type: "function",
        name: tool.name,
        description: tool.description,
        parameters: tool.input_schema,
        strict: false
      }))
    }
    : {}),
  stream,
  store: false,
  ...(request.maxOutputTokens !== undefined ? { max_output_tokens: request.maxOutputTokens } : {}),
  ...(reasoningEnabled(request)
    ? { reasoning: { effort: request.reasoningEffort, summary: "auto" }, include: ["reasoning.encrypted_content"] }
    : {}),
  ...(request.cacheRetention === "none" ? {} : { prompt_cache_key: request.conversationKey }),
  ...(request.cacheRetention === "long" ? { prompt_cache_retention: "24h" } : {})
})

const usageOf = (response: unknown): Usage => ({
  input_tokens: numberAt(response, "usage", "input_tokens"),
  output_tokens: numberAt(response, "usage", "output_tokens"),
  cache_read_tokens: numberAt(response, "usage", "input_tokens_details", "cached_tokens"),
  cache_write_tokens: 0
})

const stopReasonOf = (response: unknown, sawToolCall: boolean): StopReason => {
  switch (stringAt(response, "incomplete_details", "reason")) {
    case "max_output_tokens":
      return "max_tokens"
    case "content_filter":
      return "content_filter"
  }
  return sawToolCall ? "tool_calls" : "end_turn"
}

/** A finished output item: a tool call or the end of a reasoning block. */
const completedItem = (item: unknown): ReadonlyArray<ModelEvent> => {
  switch (stringAt(item, "type")) {
    case "function_call":
      return [{
        type: "tool_call",
        call_id: stringAt(item, "call_id") ?? "",
        name: stringAt(item, "name") ?? "",
        input: parseToolInput(stringAt(item, "arguments") ?? "")
      }]
    case "reasoning": {
      const encrypted = stringAt(item, "encrypted_content")
      return [{
        type: "reasoning_done",
        replay: encrypted === undefined
          ? undefined
          : { api_format: "openai-responses", kind: "encrypted_content", data: encrypted }
      }]
    }
  }
  return []
}

const failure = (response: unknown) =>
  new ModelProviderError({
    status: null,
    message: stringAt(response, "error", "message") ?? "The provider reported the response as failed"
  })

const streamDecoder = () => {
  let sawToolCall = false
  return (sse: SseEvent): ReadonlyArray<ModelEvent> => {
    const event = parseJson(sse.data)
    switch (stringAt(event, "type") ?? sse.event) {
      case "response.output_text.delta":
        return [{ type: "text_delta", text: stringAt(event, "delta") ?? "" }]
      case "response.refusal.delta":
        return [{ type: "text_delta", text: stringAt(event, "delta") ?? "" }]
      case "response.reasoning_summary_part.added":
        return numberAt(event, "summary_index") > 0 ? [{ type: "reasoning_delta", text: "\n\n" }] : []
      case "response.reasoning_summary_text.delta":
        return [{ type: "reasoning_delta", text: stringAt(event, "delta") ?? "" }]
      case "response.output_item.done": {
        const events = completedItem(at(event, "item"))
        if (events.some((e) => e.type === "tool_call")) sawToolCall = true
        return events
      }
      case "response.completed":
      case "response.incomplete": {
        const response = at(event, "response")
        return [
          { type: "usage", usage: usageOf(response) },
          { type: "done", stop_reason: stopReasonOf(response, sawToolCall) }
        ]
      }
      case "response.failed":
        throw failure(at(event, "response"))
      case "error":
        throw new ModelProviderError({ status: null, message: stringAt(event, "message") ?? sse.data })
    }
    return []
  }
}

const decodeResponse = (response: unknown): ReadonlyArray<ModelEvent> => {
  if (stringAt(response, "status") === "failed") throw failure(response)
  const events: Array<ModelEvent> = []
  for (const item of arrayAt(response, "output")) {
    switch (stringAt(item, "type")) {
      case "message":
        for (const part of arrayAt(item, "content")) {
          const text = stringAt(part, "text") ?? stringAt(part, "refusal")
          if (text !== undefined) events.push({ type: "text_delta", text })
        }
        break
      case "reasoning": {
        const summary = arrayAt(item, "summary").map((part) => stringAt(part, "text") ?? "").join("\n\n")
        if (summary !== "") events.push({ type: "reasoning_delta", text: summary })
        events.push(...completedItem(item))
        break
      }
      case "function_call":
        events.push(...completedItem(item))
        break
    }
  }
  const sawToolCall = events.some((event) => event.type === "tool_call")
  events.push({ type: "usage", usage: usageOf(response) }, { type: "done", stop_reason: stopReasonOf(response, sawToolCall) })
  return events
}

export const OpenAiResponses: WireAdapter = {
  path: "/responses",
  headers: bearer,
  body,
  streamDecoder,
  decodeResponse,
  errorMessage: (error) => stringAt(error, "error", "message")
}
