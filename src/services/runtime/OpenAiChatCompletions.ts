/**
 * `openai-chat-completions`: POST {base_url}/chat/completions, the format most third-party
 * routes speak. Reasoning text is read from `reasoning_content` / `reasoning` where a route sends
 * it (the vendor's own route does not); it is not replayed. docs/model-adapters.md.
 */
import type { ConversationItem, ModelEvent, ModelRequest, StopReason, ToolCall, Usage } from "./ModelMessages.ts"
import { blocksText, ModelProviderError, parseToolInput, toolResultText } from "./ModelMessages.ts"
import type { SseEvent, WireAdapter } from "./WireAdapter.ts"
import { arrayAt, at, bearer, numberAt, parseJson, stringAt } from "./WireAdapter.ts"

type Message = Record<string, unknown>

const messages = (request: ModelRequest): ReadonlyArray<Message> => {
  const result: Array<Message> = [{ role: "system", content: request.instruction }]
  let assistant: { content: string | null; tool_calls: Array<unknown> } | undefined
  const closeAssistant = () => {
    if (assistant === undefined) return
    result.push({
      role: "assistant",
      content: assistant.content,
      ...(assistant.tool_calls.length > 0 ? { tool_calls: assistant.tool_calls } : {})
    })
    assistant = undefined
  }
  const openAssistant = () => (assistant ??= { content: null, tool_calls: [] })
  const toolCall = (item: ToolCall) => ({
    id: item.call_id,
    type: "function",
    function: { name: item.name, arguments: JSON.stringify(item.input) }
  })
  for (const item of request.conversation as ReadonlyArray<ConversationItem>) {
    switch (item.type) {
      case "user_message":
        closeAssistant()
        result.push({ role: "user", content: blocksText(item.content) })
        break
      case "assistant_text": {
        const open = openAssistant()
        open.content = open.content === null ? item.text : `${open.content}\n\n${item.text}`
        break
      }
      case "assistant_reasoning":
        break
      case "tool_call":
        openAssistant().tool_calls.push(toolCall(item))
        break
      case "tool_result":
        closeAssistant()
        result.push({ role: "tool", tool_call_id: item.call_id, content: toolResultText(item) })
        break
    }
  }
  closeAssistant()
  return result
}

const body = (request: ModelRequest, stream: boolean): Record<string, unknown> => ({
  model: request.model,
  messages: messages(request),
  ...(request.tools.length > 0
    ? {
      tools: request.tools.map((tool) => ({
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: tool.input_schema }
      }))
    }
    : {}),
  stream,
  ...(stream ? { stream_options: { include_usage: true } } : {}),
  ...(request.maxOutputTokens !== undefined ? { max_completion_tokens: request.maxOutputTokens } : {}),
  ...(request.reasoningEffort !== undefined && request.reasoningEffort !== "none"
    ? { reasoning_effort: request.reasoningEffort }
    : {}),
  ...(request.cacheRetention === "none" ? {} : { prompt_cache_key: request.conversationKey }),
  ...(request.cacheRetention === "long" ? { prompt_cache_retention: "24h" } : {})
})

const usageOf = (usage: unknown): Usage => ({
  input_tokens: numberAt(usage, "prompt_tokens"),
  output_tokens: numberAt(usage, "completion_tokens"),
  cache_read_tokens: numberAt(usage, "prompt_tokens_details", "cached_tokens"),
  cache_write_tokens: 0
})

const stopReasonOf = (finishReason: string | undefined, sawToolCall: boolean): StopReason => {
  switch (finishReason) {
    case "length":
      return "max_tokens"
    case "content_filter":
      return "content_filter"
    case "tool_calls":
    case "function_call":
      return "tool_calls"
  }
  return sawToolCall ? "tool_calls" : "end_turn"
}

const reasoningOf = (value: unknown) => stringAt(value, "reasoning_content") ?? stringAt(value, "reasoning")

const errorOf = (body: unknown) =>
  at(body, "error") === undefined
    ? undefined
    : new ModelProviderError({ status: null, message: stringAt(body, "error", "message") ?? JSON.stringify(at(body, "error")) })

const streamDecoder = () => {
  const toolCalls = new Map<number, { id: string; name: string; arguments: string }>()
  let finishReason: string | undefined
  let usage: Usage | undefined
  let reasoningOpen = false
  const closeReasoning = (): ReadonlyArray<ModelEvent> => {
    if (!reasoningOpen) return []
    reasoningOpen = false
    return [{ type: "reasoning_done", replay: undefined }]
  }
  return (sse: SseEvent): ReadonlyArray<ModelEvent> => {
    if (sse.data.trim() === "[DONE]") {
      const calls = [...toolCalls.entries()].sort(([a], [b]) => a - b).map(([, call]): ModelEvent => ({
        type: "tool_call",
        call_id: call.id,
        name: call.name,
        input: parseToolInput(call.arguments)
      }))
      return [
        ...closeReasoning(),
        ...calls,
        ...(usage === undefined ? [] : [{ type: "usage", usage } as const]),
        { type: "done", stop_reason: stopReasonOf(finishReason, calls.length > 0) }
      ]
    }
    const chunk = parseJson(sse.data)
    const error = errorOf(chunk)
    if (error !== undefined) throw error
    if (at(chunk, "usage") !== undefined && at(chunk, "usage") !== null) usage = usageOf(at(chunk, "usage"))
    const events: Array<ModelEvent> = []
    for (const choice of arrayAt(chunk, "choices")) {
      const delta = at(choice, "delta")
      const reasoning = reasoningOf(delta)
      if (reasoning !== undefined && reasoning !== "") {
        reasoningOpen = true
        events.push({ type: "reasoning_delta", text: reasoning })
      }
      const content = stringAt(delta, "content") ?? stringAt(delta, "refusal")
      if (content !== undefined && content !== "") events.push(...closeReasoning(), { type: "text_delta", text: content })
      for (const call of arrayAt(delta, "tool_calls")) {
        const index = numberAt(call, "index")
        const current = toolCalls.get(index) ?? { id: "", name: "", arguments: "" }
        toolCalls.set(index, {
          id: stringAt(call, "id") ?? current.id,
          name: current.name + (stringAt(call, "function", "name") ?? ""),
          arguments: current.arguments + (stringAt(call, "function", "arguments") ?? "")
        })
      }
      finishReason = stringAt(choice, "finish_reason") ?? finishReason
    }
    return events
  }
}

const decodeResponse = (response: unknown): ReadonlyArray<ModelEvent> => {
  const error = errorOf(response)
  if (error !== undefined) throw error
  const choice = at(response, "choices", 0)
  const message = at(choice, "message")
  const events: Array<ModelEvent> = []
  const reasoning = reasoningOf(message)
  if (reasoning !== undefined && reasoning !== "") {
    events.push({ type: "reasoning_delta", text: reasoning }, { type: "reasoning_done", replay: undefined })
  }
  const content = stringAt(message, "content") ?? stringAt(message, "refusal")
  if (content !== undefined && content !== "") events.push({ type: "text_delta", text: content })
  for (const call of arrayAt(message, "tool_calls")) {
    events.push({
      type: "tool_call",
      call_id: stringAt(call, "id") ?? "",
      name: stringAt(call, "function", "name") ?? "",
      input: parseToolInput(stringAt(call, "function", "arguments") ?? "")
    })
  }
  const sawToolCall = events.some((event) => event.type === "tool_call")
  events.push(
    { type: "usage", usage: usageOf(at(response, "usage")) },
    { type: "done", stop_reason: stopReasonOf(stringAt(choice, "finish_reason"), sawToolCall) }
  )
  return events
}

export const OpenAiChatCompletions: WireAdapter = {
  path: "/chat/completions",
  headers: bearer,
  body,
  streamDecoder,
  decodeResponse,
  errorMessage: (error) => stringAt(error, "error", "message")
}
