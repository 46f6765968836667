/**
 * `openai-chat-completions`: POST {base_url}/chat/completions, the format most third-party
 * routes speak. Reasoning text is read from `reasoning_content` / `reasoning` where a route sends
 * it (the vendor's own route does not); it is not replayed. docs/model-adapters.md.
 */
import { Result, Schema } from "effect"
import { type AnswerSize, PendingItems } from "./AnswerSize.ts"
import type { ConversationItem, ModelEvent, ModelRequest, StopReason, Usage } from "./ModelMessages.ts"
import { blocksText, ModelProviderError, parseToolInput, reasoningEffortOf, toolResultText } from "./ModelMessages.ts"
import { Count, decodeJson, Maybe, Nullish } from "./ProviderJson.ts"
import type { SseEvent, WireAdapter } from "./WireAdapter.ts"
import { bearer } from "./WireAdapter.ts"
import { JsonElements, jsonWithArray, keptFold } from "./WireJson.ts"

/** What an item adds to the messages, as JSON. */
type ItemJson =
  | { readonly kind: "message"; readonly json: string }
  | { readonly kind: "assistant_text"; readonly json: string }
  | { readonly kind: "tool_call"; readonly json: string }
  | { readonly kind: "none" }

const itemJson = (item: ConversationItem): ItemJson => {
  switch (item.type) {
    case "user_message":
      return { kind: "message", json: JSON.stringify({ role: "user", content: blocksText(item.content) }) }
    case "tool_result":
      return {
        kind: "message",
        json: JSON.stringify({ role: "tool", tool_call_id: item.call_id, content: toolResultText(item) })
      }
    case "assistant_text":
      return { kind: "assistant_text", json: JSON.stringify(item.text) }
    case "tool_call":
      return {
        kind: "tool_call",
        json: JSON.stringify({
          id: item.call_id,
          type: "function",
          function: { name: item.name, arguments: JSON.stringify(item.input) }
        })
      }
    case "assistant_reasoning":
      return { kind: "none" }
  }
}

/**
 * The JSON string of texts joined by a blank line, from the texts' own JSON strings: JSON escapes
 * each character alone, so the escaped parts joined by an escaped "\n\n" are the escaped whole.
 */
const joinedTextJson = (texts: ReadonlyArray<string>) => `"${texts.map((text) => text.slice(1, -1)).join("\\n\\n")}"`

/** An assistant's message from its consecutive texts and tool calls (their kept JSON). */
const assistantJson = (texts: ReadonlyArray<string>, calls: ReadonlyArray<string>) =>
  `{"role":"assistant","content":${texts.length === 0 ? "null" : joinedTextJson(texts)}${
    calls.length > 0 ? `,"tool_calls":[${calls.join(",")}]` : ""
  }}`

/** The messages folded so far, and the assistant's texts and tool calls that the next items may still join. */
interface MessagesFold {
  readonly messages: JsonElements
  readonly texts: Array<string>
  readonly calls: Array<string>
}

const closeAssistant = (fold: MessagesFold) => {
  if (fold.texts.length === 0 && fold.calls.length === 0) return
  fold.messages.push(assistantJson(fold.texts, fold.calls))
  fold.texts.length = 0
  fold.calls.length = 0
}

/**
 * The conversation's messages, folded over its items and kept per array of items (WireJson.ts):
 * the items in order, where an assistant's consecutive texts and tool calls make one message.
 */
const messagesOf = keptFold<MessagesFold>({
  start: () => ({ messages: JsonElements.empty(), texts: [], calls: [] }),
  copy: (fold) => ({ messages: fold.messages.copy(), texts: [...fold.texts], calls: [...fold.calls] }),
  step: (fold, item) => {
    const written = itemJson(item)
    switch (written.kind) {
      case "message":
        closeAssistant(fold)
        fold.messages.push(written.json)
        break
      case "assistant_text":
        fold.texts.push(written.json)
        break
      case "tool_call":
        fold.calls.push(written.json)
        break
    }
  },
  settle: (fold) => fold.messages.settle()
})

/** The messages as JSON chunks: the instruction as the system message, then the conversation's. */
const messagesJson = (request: ModelRequest): Array<Buffer> => {
  const fold = messagesOf(request.conversation)
  const open = fold.texts.length === 0 && fold.calls.length === 0 ? [] : [assistantJson(fold.texts, fold.calls)]
  return fold.messages.chunks(open, JSON.stringify({ role: "system", content: request.instruction }))
}

const body = (request: ModelRequest, stream: boolean): Array<Buffer> =>
  jsonWithArray(
    {
      model: request.model,
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
      ...(reasoningEffortOf(request) === undefined ? {} : { reasoning_effort: request.reasoningEffort }),
      ...(request.cacheRetention === "none" ? {} : { prompt_cache_key: request.conversationKey }),
      ...(request.cacheRetention === "long" ? { prompt_cache_retention: "24h" } : {})
    },
    "messages",
    messagesJson(request)
  )

const ChatUsage = Schema.Struct({
  prompt_tokens: Count,
  completion_tokens: Count,
  prompt_tokens_details: Maybe(Schema.Struct({ cached_tokens: Count }))
})

const ErrorMessage = Schema.Struct({ message: Maybe(Schema.String) })

/** What a whole (not streamed) message carries; a streamed chunk's delta reads the same fields as `Nullish`. */
const MessageFields = {
  content: Maybe(Schema.String),
  refusal: Maybe(Schema.String),
  reasoning_content: Maybe(Schema.String),
  reasoning: Maybe(Schema.String)
}

const FunctionCall = Maybe(Schema.Struct({ name: Maybe(Schema.String), arguments: Maybe(Schema.String) }))

/** A streamed chunk, one a token: its fields are `Nullish`, read with their defaults in `streamDecoder`. */
const decodeChunk = decodeJson(Schema.Struct({
  choices: Nullish(Schema.Array(Schema.Struct({
    delta: Nullish(Schema.Struct({
      content: Nullish(Schema.String),
      refusal: Nullish(Schema.String),
      reasoning_content: Nullish(Schema.String),
      reasoning: Nullish(Schema.String),
      tool_calls: Nullish(Schema.Array(Schema.Struct({
        index: Nullish(Schema.Number),
        id: Nullish(Schema.String),
        function: Nullish(Schema.Struct({ name: Nullish(Schema.String), arguments: Nullish(Schema.String) }))
      })))
    })),
    finish_reason: Nullish(Schema.String)
  }))),
  usage: Nullish(ChatUsage),
  error: Nullish(ErrorMessage)
}))

const decodeCompletion = decodeJson(Schema.Struct({
  choices: Maybe(Schema.Array(Schema.Struct({
    message: Maybe(Schema.Struct({
      ...MessageFields,
      tool_calls: Maybe(Schema.Array(Schema.Struct({ id: Maybe(Schema.String), function: FunctionCall })))
    })),
    finish_reason: Maybe(Schema.String)
  }))),
  usage: Maybe(ChatUsage),
  error: Maybe(ErrorMessage)
}))

const usageOf = (usage: typeof ChatUsage.Type | undefined): Usage => ({
  input_tokens: usage?.prompt_tokens ?? 0,
  output_tokens: usage?.completion_tokens ?? 0,
  cache_read_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
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

const reasoningOf = (message: { readonly reasoning_content?: string | null; readonly reasoning?: string | null }) =>
  message.reasoning_content ?? message.reasoning ?? undefined

/** An `error` in a body that otherwise looks like an answer. */
const errorOf = (body: { readonly error?: { readonly message?: string } | null }) =>
  body.error === undefined || body.error === null
    ? undefined
    : new ModelProviderError({ status: null, message: body.error.message ?? JSON.stringify(body.error) })

/** A tool call as its deltas come: the id (given once), the name and the arguments (in pieces). */
type ToolCallField = "id" | "name" | "arguments"

const streamDecoder = (size: AnswerSize) => {
  // Made events of only at the stream's end: a call's deltas may come until then.
  const toolCalls = new PendingItems<ToolCallField>(size)
  let finishReason: string | undefined
  let usage: Usage | undefined
  let reasoningOpen = false
  const closeReasoning = (): ReadonlyArray<ModelEvent> => {
    if (!reasoningOpen) return []
    reasoningOpen = false
    return [{ type: "reasoning_done", replay: undefined }]
  }
  const done = (): ReadonlyArray<ModelEvent> => {
    const calls = toolCalls.takeAll().map((call): ModelEvent => ({
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
  return (sse: SseEvent): Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError> => {
    if (sse.data.trim() === "[DONE]") return Result.succeed(done())
    return Result.flatMap(decodeChunk(sse.data), (chunk) => {
      const error = errorOf(chunk)
      if (error !== undefined) return Result.fail(error)
      if (chunk.usage !== undefined && chunk.usage !== null) usage = usageOf(chunk.usage)
      const events: Array<ModelEvent> = []
      for (const choice of chunk.choices ?? []) {
        const delta = choice.delta ?? {}
        const reasoning = reasoningOf(delta)
        if (reasoning !== undefined && reasoning !== "") {
          reasoningOpen = true
          events.push({ type: "reasoning_delta", text: reasoning })
        }
        const content = delta.content ?? delta.refusal ?? undefined
        if (content !== undefined && content !== "") events.push(...closeReasoning(), { type: "text_delta", text: content })
        for (const call of delta.tool_calls ?? []) {
          const index = call.index ?? 0
          if (!toolCalls.has(index)) toolCalls.begin(index, { id: "", name: "", arguments: "" }, true)
          if (call.id !== undefined && call.id !== null) toolCalls.replace(index, "id", call.id)
          toolCalls.append(index, "name", call.function?.name ?? "")
          toolCalls.append(index, "arguments", call.function?.arguments ?? "")
        }
        finishReason = choice.finish_reason ?? finishReason
      }
      return Result.succeed(events)
    })
  }
}

const decodeResponse = (body: string): Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError> =>
  Result.flatMap(decodeCompletion(body), (completion) => {
    const error = errorOf(completion)
    if (error !== undefined) return Result.fail(error)
    const choice = completion.choices?.[0]
    const message = choice?.message ?? {}
    const events: Array<ModelEvent> = []
    const reasoning = reasoningOf(message)
    if (reasoning !== undefined && reasoning !== "") {
      events.push({ type: "reasoning_delta", text: reasoning }, { type: "reasoning_done", replay: undefined })
    }
    const content = message.content ?? message.refusal
    if (content !== undefined && content !== "") events.push({ type: "text_delta", text: content })
    for (const call of message.tool_calls ?? []) {
      events.push({
        type: "tool_call",
        call_id: call.id ?? "",
        name: call.function?.name ?? "",
        input: parseToolInput(call.function?.arguments ?? "")
      })
    }
    const sawToolCall = events.some((event) => event.type === "tool_call")
    events.push(
      { type: "usage", usage: usageOf(completion.usage) },
      { type: "done", stop_reason: stopReasonOf(choice?.finish_reason, sawToolCall) }
    )
    return Result.succeed(events)
  })

export const OpenAiChatCompletions: WireAdapter = {
  path: "/chat/completions",
  headers: bearer,
  body,
  streamDecoder,
  decodeResponse
}
