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

/** The schema of each streamed event, by its type. */
const StreamEvents = {
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
}

const streamEvent = typedEvents(StreamEvents)

/** A streamed event of type `Type`, decoded. */
type StreamEvent<Type extends keyof typeof StreamEvents> = (typeof StreamEvents)[Type]["Type"]

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

/** What a stream's decoder keeps from one event to the next. */
interface StreamState {
  readonly blocks: PendingItems<BlockField>
  inputUsage: InputUsage
  outputTokens: number
  stopReason: string | undefined
}

/** The usage the message starts with: its input counts, and the output tokens so far. */
const messageStarted = (state: StreamState, event: StreamEvent<"message_start">): ReadonlyArray<ModelEvent> => {
  const usage = event.message.usage
  state.inputUsage = usage ?? NO_INPUT
  state.outputTokens = usage?.output_tokens ?? 0
  return [{ type: "usage", usage: usageOf(state.inputUsage, state.outputTokens) }]
}

/** A block begins: kept until its stop if it makes its events then, and its first text if it has some. */
const blockStarted = (blocks: PendingItems<BlockField>, event: StreamEvent<"content_block_start">): ReadonlyArray<ModelEvent> => {
  const block = event.content_block
  if (KEPT_BLOCKS.has(block.type)) {
    blocks.begin(event.index, {
      type: block.type,
      id: block.id,
      name: block.name,
      json: "",
      signature: block.signature,
      data: block.data
    }, block.type === "tool_use")
  } else blocks.take(event.index)
  const text = block.type === "text" ? block.text : block.type === "thinking" ? block.thinking : undefined
  if (text === undefined || text === "") return []
  return [{ type: block.type === "text" ? "text_delta" : "reasoning_delta", text }]
}

/** A piece of a block: text and thinking made events at once, a signature's or a tool input's pieces kept. */
const blockDelta = (blocks: PendingItems<BlockField>, event: StreamEvent<"content_block_delta">): ReadonlyArray<ModelEvent> => {
  const index = event.index ?? 0
  const delta = event.delta
  switch (delta.type) {
    case "text_delta":
      return [{ type: "text_delta", text: delta.text ?? "" }]
    case "thinking_delta":
      return [{ type: "reasoning_delta", text: delta.thinking ?? "" }]
    case "signature_delta":
      blocks.append(index, "signature", delta.signature ?? "")
      return []
    case "input_json_delta":
      blocks.append(index, "json", delta.partial_json ?? "")
      return []
  }
  return []
}

/** A block ends: a kept block's event (a tool call, or the end of a thinking block with what replays it). */
const blockStopped = (blocks: PendingItems<BlockField>, event: StreamEvent<"content_block_stop">): ReadonlyArray<ModelEvent> => {
  const open = blocks.take(event.index)
  switch (open?.type) {
    case "tool_use":
      return [{ type: "tool_call", call_id: open.id, name: open.name, input: parseToolInput(open.json) }]
    case "thinking":
      return [{
        type: "reasoning_done",
        replay: { api_format: "anthropic-messages", kind: "signature", data: open.signature }
      }]
    case "redacted_thinking":
      return [{
        type: "reasoning_done",
        replay: { api_format: "anthropic-messages", kind: "redacted", data: open.data }
      }]
  }
  return []
}

/** The message's stop reason so far, and its usage updated with the counts the event gives. */
const messageDelta = (state: StreamState, event: StreamEvent<"message_delta">): ReadonlyArray<ModelEvent> => {
  state.stopReason = event.delta?.stop_reason ?? state.stopReason
  const usage = event.usage
  if (usage?.input_tokens !== undefined) {
    state.inputUsage = {
      input_tokens: usage.input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens
    }
  }
  state.outputTokens = usage?.output_tokens || state.outputTokens
  return [{ type: "usage", usage: usageOf(state.inputUsage, state.outputTokens) }]
}

export const streamDecoder = (size: AnswerSize) => {
  const state: StreamState = { blocks: new PendingItems(size), inputUsage: NO_INPUT, outputTokens: 0, stopReason: undefined }
  return (sse: SseEvent): Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError> =>
    Result.flatMap(streamEvent(sse), (decoded): Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError> => {
      if (decoded === undefined) return Result.succeed([])
      switch (decoded.type) {
        case "message_start":
          return Result.succeed(messageStarted(state, decoded.event))
        case "content_block_start":
          return Result.succeed(blockStarted(state.blocks, decoded.event))
        case "content_block_delta":
          return Result.succeed(blockDelta(state.blocks, decoded.event))
        case "content_block_stop":
          return Result.succeed(blockStopped(state.blocks, decoded.event))
        case "message_delta":
          return Result.succeed(messageDelta(state, decoded.event))
        case "message_stop":
          return Result.succeed([{ type: "done", stop_reason: stopReasonOf(state.stopReason) }])
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
