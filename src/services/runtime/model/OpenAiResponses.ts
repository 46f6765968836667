/**
 * `openai-responses`: POST {base_url}/responses. Stateless (`store: false`): the whole history
 * is sent each call, reasoning comes back encrypted (`include: ["reasoning.encrypted_content"]`)
 * and is replayed with its summary. docs/model-adapters.md.
 */
import { Result, Schema } from "effect"
import type { ConversationItem, ModelEvent, ModelRequest, StopReason, Usage } from "./ModelMessages.ts"
import { ModelProviderError, parseToolInput, reasoningEffortOf, toolResultText } from "./ModelMessages.ts"
import { Count, decodeJson, Maybe, Nullish, Text, typedEvents } from "./ProviderJson.ts"
import type { SseEvent, WireAdapter } from "./WireAdapter.ts"
import { bearer } from "./WireAdapter.ts"
import { JsonElements, jsonWithArray, keptFold } from "./WireJson.ts"

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

/** An item's input entries as JSON, comma-separated (none: ""). */
const inputJson = (item: ConversationItem) => inputItem(item).map((entry) => JSON.stringify(entry)).join(",")

/** The input array's elements, folded over the conversation and kept per array of items (WireJson.ts). */
const inputElements = keptFold<JsonElements>({
  start: JsonElements.empty,
  copy: (elements) => elements.copy(),
  step: (elements, item) => {
    const json = inputJson(item)
    if (json !== "") elements.push(json)
  },
  settle: (elements) => elements.settle()
})

const body = (request: ModelRequest, stream: boolean): Array<Buffer> =>
  jsonWithArray(
    {
      model: request.model,
      instructions: request.instruction,
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
      ...(reasoningEffortOf(request) === undefined
        ? {}
        : { reasoning: { effort: request.reasoningEffort, summary: "auto" }, include: ["reasoning.encrypted_content"] }),
      ...(request.cacheRetention === "none" ? {} : { prompt_cache_key: request.conversationKey }),
      ...(request.cacheRetention === "long" ? { prompt_cache_retention: "24h" } : {})
    },
    "input",
    inputElements(request.conversation).chunks([])
  )

const OutputItem = Schema.Struct({
  type: Schema.String,
  call_id: Text,
  name: Text,
  arguments: Text,
  encrypted_content: Maybe(Schema.String),
  content: Maybe(Schema.Array(Schema.Struct({ text: Maybe(Schema.String), refusal: Maybe(Schema.String) }))),
  summary: Maybe(Schema.Array(Schema.Struct({ text: Text })))
})
type OutputItem = typeof OutputItem.Type

const ResponseObject = Schema.Struct({
  status: Maybe(Schema.String),
  output: Maybe(Schema.Array(OutputItem)),
  usage: Maybe(Schema.Struct({
    input_tokens: Count,
    output_tokens: Count,
    input_tokens_details: Maybe(Schema.Struct({ cached_tokens: Count }))
  })),
  incomplete_details: Maybe(Schema.Struct({ reason: Maybe(Schema.String) })),
  error: Maybe(Schema.Struct({ message: Maybe(Schema.String) }))
})
type ResponseObject = typeof ResponseObject.Type

/** A piece of text: the event a stream sends most of, so its field is `Nullish`. */
const Delta = Schema.Struct({ delta: Nullish(Schema.String) })

const streamEvent = typedEvents({
  "response.output_text.delta": Delta,
  "response.refusal.delta": Delta,
  "response.reasoning_summary_part.added": Schema.Struct({ summary_index: Count }),
  "response.reasoning_summary_text.delta": Delta,
  "response.output_item.done": Schema.Struct({ item: OutputItem }),
  "response.completed": Schema.Struct({ response: ResponseObject }),
  "response.incomplete": Schema.Struct({ response: ResponseObject }),
  "response.failed": Schema.Struct({ response: ResponseObject }),
  "error": Schema.Struct({ message: Maybe(Schema.String) })
})

const decodeResponseObject = decodeJson(ResponseObject)

const usageOf = (response: ResponseObject): Usage => ({
  input_tokens: response.usage?.input_tokens ?? 0,
  output_tokens: response.usage?.output_tokens ?? 0,
  cache_read_tokens: response.usage?.input_tokens_details?.cached_tokens ?? 0,
  cache_write_tokens: 0
})

const stopReasonOf = (response: ResponseObject, sawToolCall: boolean): StopReason => {
  switch (response.incomplete_details?.reason) {
    case "max_output_tokens":
      return "max_tokens"
    case "content_filter":
      return "content_filter"
  }
  return sawToolCall ? "tool_calls" : "end_turn"
}

/** A finished output item: a tool call or the end of a reasoning block. */
const completedItem = (item: OutputItem): ReadonlyArray<ModelEvent> => {
  switch (item.type) {
    case "function_call":
      return [{ type: "tool_call", call_id: item.call_id, name: item.name, input: parseToolInput(item.arguments) }]
    case "reasoning":
      return [{
        type: "reasoning_done",
        replay: item.encrypted_content === undefined
          ? undefined
          : { api_format: "openai-responses", kind: "encrypted_content", data: item.encrypted_content }
      }]
  }
  return []
}

const failure = (response: ResponseObject) =>
  new ModelProviderError({
    status: null,
    message: response.error?.message ?? "The provider reported the response as failed"
  })

const ended = (response: ResponseObject, sawToolCall: boolean): ReadonlyArray<ModelEvent> => [
  { type: "usage", usage: usageOf(response) },
  { type: "done", stop_reason: stopReasonOf(response, sawToolCall) }
]

const streamDecoder = () => {
  let sawToolCall = false
  return (sse: SseEvent): Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError> =>
    Result.flatMap(streamEvent(sse), (decoded): Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError> => {
      if (decoded === undefined) return Result.succeed([])
      switch (decoded.type) {
        case "response.output_text.delta":
        case "response.refusal.delta":
          return Result.succeed([{ type: "text_delta", text: decoded.event.delta ?? "" }])
        case "response.reasoning_summary_part.added":
          return Result.succeed(decoded.event.summary_index > 0 ? [{ type: "reasoning_delta", text: "\n\n" }] : [])
        case "response.reasoning_summary_text.delta":
          return Result.succeed([{ type: "reasoning_delta", text: decoded.event.delta ?? "" }])
        case "response.output_item.done": {
          const events = completedItem(decoded.event.item)
          if (events.some((event) => event.type === "tool_call")) sawToolCall = true
          return Result.succeed(events)
        }
        case "response.completed":
        case "response.incomplete":
          return Result.succeed(ended(decoded.event.response, sawToolCall))
        case "response.failed":
          return Result.fail(failure(decoded.event.response))
        case "error":
          return Result.fail(new ModelProviderError({ status: null, message: decoded.event.message ?? sse.data }))
      }
    })
}

const itemEvents = (item: OutputItem): ReadonlyArray<ModelEvent> => {
  switch (item.type) {
    case "message":
      return (item.content ?? []).flatMap((part): ReadonlyArray<ModelEvent> => {
        const text = part.text ?? part.refusal
        return text === undefined ? [] : [{ type: "text_delta", text }]
      })
    case "reasoning": {
      const summary = (item.summary ?? []).map((part) => part.text).join("\n\n")
      return [...(summary === "" ? [] : [{ type: "reasoning_delta" as const, text: summary }]), ...completedItem(item)]
    }
    case "function_call":
      return completedItem(item)
  }
  return []
}

const decodeResponse = (body: string): Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError> =>
  Result.flatMap(decodeResponseObject(body), (response) => {
    if (response.status === "failed") return Result.fail(failure(response))
    const events = (response.output ?? []).flatMap(itemEvents)
    return Result.succeed([...events, ...ended(response, events.some((event) => event.type === "tool_call"))])
  })

export const OpenAiResponses: WireAdapter = {
  path: "/responses",
  headers: bearer,
  body,
  streamDecoder,
  decodeResponse
}
