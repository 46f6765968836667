/**
 * `anthropic-messages`: reading what the format sends back, streamed (`message_start`,
 * `content_block_*`, `message_delta`, `message_stop`, `error` events) or whole, into ModelEvents.
 * docs/model-adapters.md.
 */
import { Result, Schema } from "effect"
import { type AnswerSize, PendingItems } from "./AnswerSize.ts"
import type { ModelEvent, StopReason, Usage } from "./ModelMessages.ts"
import { ModelProviderError, parseToolInput } from "./ModelMessages.ts"
import { Count, decodeJson, Maybe, Nullish, Text, typedEvents } from "./ProviderJson.ts"
import type { SseEvent } from "./WireAdapter.ts"

const stopReasonOf = (stopReason: string | undefined): StopReason => {
  switch (stopReason) {
    case "tool_use":
      return "tool_calls"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "max_tokens"
    case "refusal":
      return "content_filter"
  }
  return "end_turn"
}

/** Token counts: input, cached input read, cached input written. */
const InputUsage = Schema.Struct({
  input_tokens: Count,
  cache_read_input_tokens: Count,
  cache_creation_input_tokens: Count
})
type InputUsage = typeof InputUsage.Type
const AnthropicUsage = Schema.Struct({ ...InputUsage.fields, output_tokens: Count })

const Block = Schema.Struct({
  type: Schema.String,
  id: Text,
  name: Text,
  text: Maybe(Schema.String),
  thinking: Maybe(Schema.String),
  signature: Text,
  data: Text,
  input: Maybe(Schema.Record(Schema.String, Schema.Unknown))
})

const ErrorBody = Schema.Struct({ error: Maybe(Schema.Struct({ message: Maybe(Schema.String) })) })

const streamEvent = typedEvents({
  message_start: Schema.Struct({ message: Schema.Struct({ usage: Maybe(AnthropicUsage) }) }),
  content_block_start: Schema.Struct({ index: Count, content_block: Block }),
  // The event a stream sends most of (one a token): its fields are `Nullish`, read with their defaults below.
  content_block_delta: Schema.Struct({
    index: Nullish(Schema.Number),
    delta: Schema.Struct({
      type: Nullish(Schema.String),
      text: Nullish(Schema.String),
      thinking: Nullish(Schema.String),
      signature: Nullish(Schema.String),
      partial_json: Nullish(Schema.String)
    })
  }),
  content_block_stop: Schema.Struct({ index: Count }),
  message_delta: Schema.Struct({
    delta: Maybe(Schema.Struct({ stop_reason: Maybe(Schema.String) })),
    usage: Maybe(Schema.Struct({
      input_tokens: Maybe(Schema.Number),
      cache_read_input_tokens: Count,
      cache_creation_input_tokens: Count,
      output_tokens: Maybe(Schema.Number)
    }))
  }),
  message_stop: Schema.Struct({}),
  error: ErrorBody
})

const decodeMessage = decodeJson(Schema.Struct({
  type: Maybe(Schema.String),
  content: Maybe(Schema.Array(Block)),
  usage: Maybe(AnthropicUsage),
  stop_reason: Maybe(Schema.String),
  ...ErrorBody.fields
}))

/** Input counts all input tokens, cached or not (the format reports the three apart). */
const usageOf = (input: InputUsage, outputTokens: number): Usage => ({
  input_tokens: input.input_tokens + input.cache_read_input_tokens + input.cache_creation_input_tokens,
  output_tokens: outputTokens,
  cache_read_tokens: input.cache_read_input_tokens,
  cache_write_tokens: input.cache_creation_input_tokens
})

const NO_INPUT: InputUsage = { input_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }

const streamError = (body: typeof ErrorBody.Type, data: string) =>
  new ModelProviderError({ status: null, message: body.error?.message ?? data })

/**
 * What a block keeps until its stop, by its type: a tool call's id, name and input (its JSON in
 * pieces); a thinking block's signature (in pieces); a redacted thinking block's data. Other
 * blocks (text) make their events as their deltas come and keep nothing.
 */
type BlockField = "type" | "id" | "name" | "json" | "signature" | "data"

const KEPT_BLOCKS: ReadonlySet<string> = new Set(["tool_use", "thinking", "redacted_thinking"])

export const streamDecoder = (size: AnswerSize) => {
  const blocks = new PendingItems<BlockField>(size)
  let inputUsage = NO_INPUT
  let outputTokens = 0
  let stopReason: string | undefined
  return (sse: SseEvent): Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError> =>
    Result.flatMap(streamEvent(sse), (decoded): Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError> => {
      if (decoded === undefined) return Result.succeed([])
      switch (decoded.type) {
        case "message_start": {
          const usage = decoded.event.message.usage
          inputUsage = usage ?? NO_INPUT
          outputTokens = usage?.output_tokens ?? 0
          return Result.succeed([{ type: "usage", usage: usageOf(inputUsage, outputTokens) }])
        }
        case "content_block_start": {
          const block = decoded.event.content_block
          if (KEPT_BLOCKS.has(block.type)) {
            blocks.begin(decoded.event.index, {
              type: block.type,
              id: block.id,
              name: block.name,
              json: "",
              signature: block.signature,
              data: block.data
            }, block.type === "tool_use")
          } else blocks.take(decoded.event.index)
          const text = block.type === "text" ? block.text : block.type === "thinking" ? block.thinking : undefined
          if (text === undefined || text === "") return Result.succeed([])
          return Result.succeed([{ type: block.type === "text" ? "text_delta" : "reasoning_delta", text }])
        }
        case "content_block_delta": {
          const index = decoded.event.index ?? 0
          const delta = decoded.event.delta
          switch (delta.type) {
            case "text_delta":
              return Result.succeed([{ type: "text_delta", text: delta.text ?? "" }])
            case "thinking_delta":
              return Result.succeed([{ type: "reasoning_delta", text: delta.thinking ?? "" }])
            case "signature_delta":
              blocks.append(index, "signature", delta.signature ?? "")
              return Result.succeed([])
            case "input_json_delta":
              blocks.append(index, "json", delta.partial_json ?? "")
              return Result.succeed([])
          }
          return Result.succeed([])
        }
        case "content_block_stop": {
          const open = blocks.take(decoded.event.index)
          switch (open?.type) {
            case "tool_use":
              return Result.succeed([{ type: "tool_call", call_id: open.id, name: open.name, input: parseToolInput(open.json) }])
            case "thinking":
              return Result.succeed([{
                type: "reasoning_done",
                replay: { api_format: "anthropic-messages", kind: "signature", data: open.signature }
              }])
            case "redacted_thinking":
              return Result.succeed([{
                type: "reasoning_done",
                replay: { api_format: "anthropic-messages", kind: "redacted", data: open.data }
              }])
          }
          return Result.succeed([])
        }
        case "message_delta": {
          stopReason = decoded.event.delta?.stop_reason ?? stopReason
          const usage = decoded.event.usage
          if (usage?.input_tokens !== undefined) {
            inputUsage = {
              input_tokens: usage.input_tokens,
              cache_read_input_tokens: usage.cache_read_input_tokens,
              cache_creation_input_tokens: usage.cache_creation_input_tokens
            }
          }
          outputTokens = usage?.output_tokens || outputTokens
          return Result.succeed([{ type: "usage", usage: usageOf(inputUsage, outputTokens) }])
        }
        case "message_stop":
          return Result.succeed([{ type: "done", stop_reason: stopReasonOf(stopReason) }])
        case "error":
          return Result.fail(streamError(decoded.event, sse.data))
      }
    })
}

const blockEvents = (block: typeof Block.Type): ReadonlyArray<ModelEvent> => {
  switch (block.type) {
    case "text":
      return [{ type: "text_delta", text: block.text ?? "" }]
    case "thinking":
      return [
        { type: "reasoning_delta", text: block.thinking ?? "" },
        { type: "reasoning_done", replay: { api_format: "anthropic-messages", kind: "signature", data: block.signature } }
      ]
    case "redacted_thinking":
      return [{ type: "reasoning_done", replay: { api_format: "anthropic-messages", kind: "redacted", data: block.data } }]
    case "tool_use":
      return [{ type: "tool_call", call_id: block.id, name: block.name, input: block.input ?? {} }]
  }
  return []
}

export const decodeResponse = (body: string): Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError> =>
  Result.flatMap(decodeMessage(body), (message) =>
    message.type === "error"
      ? Result.fail(streamError(message, body))
      : Result.succeed([
        ...(message.content ?? []).flatMap(blockEvents),
        { type: "usage", usage: usageOf(message.usage ?? NO_INPUT, message.usage?.output_tokens ?? 0) },
        { type: "done", stop_reason: stopReasonOf(message.stop_reason) }
      ]))
