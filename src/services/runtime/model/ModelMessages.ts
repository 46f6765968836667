/**
 * The normalized language of model calls, independent of any vendor's wire format: the request
 * the runtime builds from an agent's timeline, the events a model call streams back, and the
 * response they fold into. Every shape is a Schema. The adapters (OpenAiResponses.ts, OpenAiChatCompletions.ts,
 * AnthropicMessages.ts) translate to and from each wire format; docs/model-adapters.md.
 */
import { Option, Redacted, Schema } from "effect"
import { ApiFormat } from "../../../domain/configuration/ModelProviderConfigs.ts"
import { CacheRetention } from "../../../domain/configuration/Models.ts"
import type { SecretId } from "../../../domain/shared/Ids.ts"
import { AnswerSize, ITEM_BYTES } from "./AnswerSize.ts"
import type { ConversationItems } from "./ConversationItems.ts"

export const TextBlock = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
export type TextBlock = typeof TextBlock.Type

/** A content block the model can read (text; media join here as the runtime stores them). */
export const ModelContentBlock = TextBlock
export type ModelContentBlock = typeof ModelContentBlock.Type

/**
 * Data a vendor needs back verbatim to continue after its reasoning (anthropic: the thinking
 * block's signature or a redacted thinking block; openai-responses: the encrypted reasoning).
 * Replayed only to the format that produced it.
 */
export const ReasoningReplay = Schema.Struct({
  api_format: ApiFormat,
  kind: Schema.Literals(["signature", "redacted", "encrypted_content"]),
  data: Schema.String
})
export type ReasoningReplay = typeof ReasoningReplay.Type

const UserMessage = Schema.Struct({
  type: Schema.Literal("user_message"),
  content: Schema.Array(ModelContentBlock)
})
const AssistantText = Schema.Struct({ type: Schema.Literal("assistant_text"), text: Schema.String })
const AssistantReasoning = Schema.Struct({
  type: Schema.Literal("assistant_reasoning"),
  summary: Schema.String,
  replay: Schema.optional(ReasoningReplay)
})
export const ToolCall = Schema.Struct({
  type: Schema.Literal("tool_call"),
  call_id: Schema.String,
  name: Schema.String,
  input: Schema.Record(Schema.String, Schema.Unknown)
})
export const ToolResult = Schema.Struct({
  type: Schema.Literal("tool_result"),
  call_id: Schema.String,
  outcome: Schema.Literals(["succeeded", "failed"]),
  content: Schema.Array(ModelContentBlock)
})
type UserMessage = typeof UserMessage.Type
type AssistantText = typeof AssistantText.Type
type AssistantReasoning = typeof AssistantReasoning.Type
export type ToolCall = typeof ToolCall.Type
export type ToolResult = typeof ToolResult.Type

/** What the model produced in one response, in order. */
export const AssistantItem = Schema.Union([AssistantText, AssistantReasoning, ToolCall])
export type AssistantItem = typeof AssistantItem.Type

/** One item of the conversation history sent to the model. */
export const ConversationItem = Schema.Union([UserMessage, AssistantText, AssistantReasoning, ToolCall, ToolResult])
export type ConversationItem = typeof ConversationItem.Type

export interface ToolDefinition {
  readonly name: string
  readonly description: string
  /** A JSON Schema object describing the tool's input. */
  readonly input_schema: Readonly<Record<string, unknown>>
}

export interface ModelRequest {
  readonly apiFormat: ApiFormat
  /** The API root including its version path, e.g. https://api.openai.com/v1. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted
  /** The secret `apiKey` was read from: what the provider echoes of the key is redacted as `[redacted secret <id>]`. */
  readonly apiKeySecretId?: SecretId | undefined
  /** The provider's model slug. */
  readonly model: string
  /** The system instruction. */
  readonly instruction: string
  readonly conversation: ConversationItems
  readonly tools: ReadonlyArray<ToolDefinition>
  /** Per-request output cap; when undefined the provider's default (anthropic: DEFAULT_ANTHROPIC_MAX_TOKENS). */
  readonly maxOutputTokens: number | undefined
  /** A reasoning effort such as "low" | "medium" | "high"; undefined or "none" sends no reasoning options. */
  readonly reasoningEffort: string | undefined
  readonly cacheRetention: CacheRetention
  /** Stable per conversation (an agent id); sent as the prompt cache key unless retention is none. */
  readonly conversationKey: string
}

/** The reasoning effort the request asks for; undefined when it asks for none (no effort, or "none"). */
export const reasoningEffortOf = (request: ModelRequest): string | undefined =>
  request.reasoningEffort === "none" ? undefined : request.reasoningEffort

export const StopReason = Schema.Literals(["end_turn", "tool_calls", "max_tokens", "content_filter"])
export type StopReason = typeof StopReason.Type

export const Usage = Schema.Struct({
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cache_read_tokens: Schema.Number,
  cache_write_tokens: Schema.Number
})
export type Usage = typeof Usage.Type

const emptyUsage: Usage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 }

/** What a model call streams back. */
export type ModelEvent =
  | { readonly type: "text_delta"; readonly text: string }
  | { readonly type: "reasoning_delta"; readonly text: string }
  /** Ends a reasoning block, with what the vendor needs replayed (where it gives any). */
  | { readonly type: "reasoning_done"; readonly replay: ReasoningReplay | undefined }
  | { readonly type: "tool_call"; readonly call_id: string; readonly name: string; readonly input: Record<string, unknown> }
  /** Token counts so far; a later usage event replaces the earlier ones. */
  | { readonly type: "usage"; readonly usage: Usage }
  | { readonly type: "done"; readonly stop_reason: StopReason }

export const ModelResponse = Schema.Struct({
  output: Schema.Array(AssistantItem),
  usage: Usage,
  stop_reason: StopReason
})
export type ModelResponse = typeof ModelResponse.Type

/**
 * The provider refused or failed the call after the retries; `status` is null when no HTTP
 * response came. `notCalled` is true when the platform refused to make the call at all (a target
 * the private-network setting forbids): it does not count as a model call.
 */
export class ModelProviderError extends Schema.TaggedError<ModelProviderError>()("ModelProviderError", {
  status: Schema.NullOr(Schema.Number),
  message: Schema.String,
  notCalled: Schema.optional(Schema.Boolean)
}) {}

/**
 * About the UTF-8 length of `value` as JSON (its strings and keys with their quotes, its other
 * values, its brackets; not its commas), walked with a stack: a model's tool input may nest deeper
 * than JSON.stringify's recursion goes (it is cut to 64 levels only once folded, StorableJson.ts).
 */
const jsonBytes = (value: unknown): number => {
  let bytes = 0
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const next = stack.pop()
    if (typeof next === "string") bytes += Buffer.byteLength(next) + 2
    else if (Array.isArray(next)) {
      bytes += 2
      for (const item of next) stack.push(item)
    } else if (typeof next === "object" && next !== null) {
      bytes += 2
      for (const key in next) {
        bytes += Buffer.byteLength(key) + 3
        stack.push((next as Record<string, unknown>)[key])
      }
    } else bytes += String(next).length
  }
  return bytes
}

/**
 * The fold of one model call's events into its response, as they arrive (text and reasoning
 * deltas joined per block): `add` each event, `result` at the end. What it holds counts in `size`
 * (AnswerSize.ts; ModelClient bounds it): texts, reasoning, tool calls' ids, names and inputs (as
 * JSON) and replay data, in UTF-8 bytes, ITEM_BYTES an item, and the tool calls.
 */
export class ResponseFold {
  /** The answer's size, which the adapter's stream decoder adds what it holds to (`PendingItems`). */
  readonly size = new AnswerSize()
  private readonly output: Array<AssistantItem> = []
  private usage = emptyUsage
  private stopReason: StopReason = "end_turn"
  private openText: string | undefined
  private openReasoning: string | undefined

  private push(item: AssistantItem) {
    this.output.push(item)
    this.size.bytes += ITEM_BYTES
  }

  private closeText() {
    if (this.openText !== undefined) this.push({ type: "assistant_text", text: this.openText })
    this.openText = undefined
  }

  private closeReasoning(replay: ReasoningReplay | undefined) {
    if (this.openReasoning !== undefined || replay !== undefined) {
      this.push(
        replay === undefined
          ? { type: "assistant_reasoning", summary: this.openReasoning ?? "" }
          : { type: "assistant_reasoning", summary: this.openReasoning ?? "", replay }
      )
    }
    this.openReasoning = undefined
  }

  add(event: ModelEvent) {
    switch (event.type) {
      case "text_delta":
        this.closeReasoning(undefined)
        this.openText = (this.openText ?? "") + event.text
        this.size.bytes += Buffer.byteLength(event.text)
        break
      case "reasoning_delta":
        this.closeText()
        this.openReasoning = (this.openReasoning ?? "") + event.text
        this.size.bytes += Buffer.byteLength(event.text)
        break
      case "reasoning_done":
        this.closeText()
        this.closeReasoning(event.replay)
        if (event.replay !== undefined) this.size.bytes += Buffer.byteLength(event.replay.data)
        break
      case "tool_call":
        this.closeText()
        this.closeReasoning(undefined)
        this.push({ type: "tool_call", call_id: event.call_id, name: event.name, input: event.input })
        this.size.toolCalls++
        this.size.bytes += Buffer.byteLength(event.call_id) + Buffer.byteLength(event.name) + jsonBytes(event.input)
        break
      case "usage":
        this.usage = event.usage
        break
      case "done":
        this.stopReason = event.stop_reason
        break
    }
  }

  result(): ModelResponse {
    this.closeText()
    this.closeReasoning(undefined)
    return { output: this.output, usage: this.usage, stop_reason: this.stopReason }
  }
}

/** The text of content blocks, as vendors that take a single string want it. */
export const blocksText = (blocks: ReadonlyArray<ModelContentBlock>) => blocks.map((block) => block.text).join("\n")

/** A tool result as text for formats without an error flag: a failed call says so first. */
export const toolResultText = (result: ToolResult) =>
  result.outcome === "failed" ? `The tool call failed.\n${blocksText(result.content)}` : blocksText(result.content)

const decodeToolInput = Schema.decodeUnknownOption(
  Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown))
)

/** Parses the JSON arguments a model produced for a tool call; anything but an object is kept under `_raw`. */
export const parseToolInput = (json: string): Record<string, unknown> =>
  json.trim() === "" ? {} : Option.getOrElse(decodeToolInput(json), () => ({ _raw: json }))
