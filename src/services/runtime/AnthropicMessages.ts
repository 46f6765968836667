/**
 * `anthropic-messages`: POST {base_url}/messages (base_url is the API root with its version,
 * e.g. https://api.anthropic.com/v1). Cache breakpoints on the tools, the system prompt and the
 * last message; extended thinking from the reasoning effort, its blocks replayed with their
 * signatures. docs/model-adapters.md.
 */
import { Redacted } from "effect"
import type { ConversationItem, ModelEvent, ModelRequest, StopReason, Usage } from "./ModelMessages.ts"
import { ModelProviderError, parseToolInput } from "./ModelMessages.ts"
import type { SseEvent, WireAdapter } from "./WireAdapter.ts"
import { arrayAt, at, numberAt, parseJson, stringAt } from "./WireAdapter.ts"

export const ANTHROPIC_VERSION = "2023-06-01"

/** `max_tokens` is required by this format: sent when the model's output cap is unknown. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 8192

/** Thinking budget per reasoning effort, before the cap that keeps room for the answer. */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 4096,
  medium: 8192,
  high: 16384,
  xhigh: 32768
}

/** The smallest budget the format accepts, and the room always left for the visible answer. */
const MIN_THINKING_BUDGET = 1024
const ANSWER_RESERVE = 1024

type Block = Record<string, unknown>
type Message = { role: "user" | "assistant"; content: Array<Block> }

const cacheControl = (request: ModelRequest): Block | undefined => {
  switch (request.cacheRetention) {
    case "none":
      return undefined
    case "short":
      return { type: "ephemeral" }
    case "long":
      return { type: "ephemeral", ttl: "1h" }
  }
}

const blocksOf = (item: ConversationItem): { role: "user" | "assistant"; blocks: ReadonlyArray<Block> } => {
  switch (item.type) {
    case "user_message":
      return {
        role: "user",
        blocks: item.content.filter((block) => block.text !== "").map((block) => ({ type: "text", text: block.text }))
      }
    case "tool_result": {
      const content = item.content.filter((block) => block.text !== "").map((block) => ({ type: "text", text: block.text }))
      return {
        role: "user",
        blocks: [{
          type: "tool_result",
          tool_use_id: item.call_id,
          ...(content.length > 0 ? { content } : {}),
          ...(item.outcome === "failed" ? { is_error: true } : {})
        }]
      }
    }
    case "assistant_text":
      return { role: "assistant", blocks: item.text === "" ? [] : [{ type: "text", text: item.text }] }
    case "assistant_reasoning": {
      const replay = item.replay?.api_format === "anthropic-messages" ? item.replay : undefined
      if (replay?.kind === "signature") {
        return { role: "assistant", blocks: [{ type: "thinking", thinking: item.summary, signature: replay.data }] }
      }
      if (replay?.kind === "redacted") return { role: "assistant", blocks: [{ type: "redacted_thinking", data: replay.data }] }
      return { role: "assistant", blocks: [] }
    }
    case "tool_call":
      return { role: "assistant", blocks: [{ type: "tool_use", id: item.call_id, name: item.name, input: item.input }] }
  }
}

/** Thinking blocks cannot carry a cache breakpoint. */
const isThinking = (block: Block) => block.type === "thinking" || block.type === "redacted_thinking"

const messages = (request: ModelRequest): Array<Message> => {
  const result: Array<Message> = []
  for (const item of request.conversation) {
    const { blocks, role } = blocksOf(item)
    if (blocks.length === 0) continue
    const last = result[result.length - 1]
    if (last !== undefined && last.role === role) last.content.push(...blocks)
    else result.push({ role, content: [...blocks] })
  }
  const control = cacheControl(request)
  const lastMessage = result[result.length - 1]
  if (control !== undefined && lastMessage !== undefined) {
    let index = lastMessage.content.length - 1
    while (index >= 0 && isThinking(lastMessage.content[index])) index--
    if (index >= 0) lastMessage.content[index] = { ...lastMessage.content[index], cache_control: control }
  }
  return result
}

/** The thinking budget for the request's effort, or undefined when thinking is off or cannot fit. */
export const thinkingBudget = (effort: string | undefined, maxTokens: number) => {
  if (effort === undefined || effort === "none") return undefined
  const budget = Math.min(THINKING_BUDGETS[effort] ?? THINKING_BUDGETS.medium, maxTokens - ANSWER_RESERVE)
  return budget >= MIN_THINKING_BUDGET ? budget : undefined
}

const body = (request: ModelRequest, stream: boolean): Record<string, unknown> => {
  const control = cacheControl(request)
  const maxTokens = request.maxOutputTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS
  const budget = thinkingBudget(request.reasoningEffort, maxTokens)
  return {
    model: request.model,
    max_tokens: maxTokens,
    system: [{ type: "text", text: request.instruction, ...(control === undefined ? {} : { cache_control: control }) }],
    messages: messages(request),
    ...(request.tools.length > 0
      ? {
        tools: request.tools.map((tool, index) => ({
          name: tool.name,
          description: tool.description,
          input_schema: tool.input_schema,
          ...(control !== undefined && index === request.tools.length - 1 ? { cache_control: control } : {})
        }))
      }
      : {}),
    ...(budget === undefined ? {} : { thinking: { type: "enabled", budget_tokens: budget } }),
    stream
  }
}

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

/** Input counts all input tokens, cached or not (the format reports the three apart). */
const usageOf = (usage: unknown, outputTokens: number): Usage => {
  const cacheRead = numberAt(usage, "cache_read_input_tokens")
  const cacheWrite = numberAt(usage, "cache_creation_input_tokens")
  return {
    input_tokens: numberAt(usage, "input_tokens") + cacheRead + cacheWrite,
    output_tokens: outputTokens,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite
  }
}

const streamError = (event: unknown, data: string) =>
  new ModelProviderError({ status: null, message: stringAt(event, "error", "message") ?? data })

interface OpenBlock {
  readonly type: string
  id: string
  name: string
  json: string
  signature: string
  data: string
}

const streamDecoder = () => {
  const blocks = new Map<number, OpenBlock>()
  let inputUsage: unknown
  let outputTokens = 0
  let stopReason: string | undefined
  return (sse: SseEvent): ReadonlyArray<ModelEvent> => {
    const event = parseJson(sse.data)
    switch (stringAt(event, "type") ?? sse.event) {
      case "message_start":
        inputUsage = at(event, "message", "usage")
        outputTokens = numberAt(inputUsage, "output_tokens")
        return [{ type: "usage", usage: usageOf(inputUsage, outputTokens) }]
      case "content_block_start": {
        const block = at(event, "content_block")
        const open: OpenBlock = {
          type: stringAt(block, "type") ?? "",
          id: stringAt(block, "id") ?? "",
          name: stringAt(block, "name") ?? "",
          json: "",
          signature: stringAt(block, "signature") ?? "",
          data: stringAt(block, "data") ?? ""
        }
        blocks.set(numberAt(event, "index"), open)
        const text = open.type === "text" ? stringAt(block, "text") : open.type === "thinking" ? stringAt(block, "thinking") : undefined
        if (text === undefined || text === "") return []
        return [{ type: open.type === "text" ? "text_delta" : "reasoning_delta", text }]
      }
      case "content_block_delta": {
        const open = blocks.get(numberAt(event, "index"))
        const delta = at(event, "delta")
        switch (stringAt(delta, "type")) {
          case "text_delta":
            return [{ type: "text_delta", text: stringAt(delta, "text") ?? "" }]
          case "thinking_delta":
            return [{ type: "reasoning_delta", text: stringAt(delta, "thinking") ?? "" }]
          case "signature_delta":
            if (open !== undefined) open.signature += stringAt(delta, "signature") ?? ""
            return []
          case "input_json_delta":
            if (open !== undefined) open.json += stringAt(delta, "partial_json") ?? ""
            return []
        }
        return []
      }
      case "content_block_stop": {
        const index = numberAt(event, "index")
        const open = blocks.get(index)
        blocks.delete(index)
        switch (open?.type) {
          case "tool_use":
            return [{ type: "tool_call", call_id: open.id, name: open.name, input: parseToolInput(open.json) }]
          case "thinking":
            return [{
              type: "reasoning_done",
              replay: { api_format: "anthropic-messages", kind: "signature", data: open.signature }
            }]
          case "redacted_thinking":
            return [{ type: "reasoning_done", replay: { api_format: "anthropic-messages", kind: "redacted", data: open.data } }]
        }
        return []
      }
      case "message_delta": {
        stopReason = stringAt(event, "delta", "stop_reason") ?? stopReason
        const usage = at(event, "usage")
        if (at(usage, "input_tokens") !== undefined) inputUsage = usage
        outputTokens = numberAt(usage, "output_tokens") || outputTokens
        return [{ type: "usage", usage: usageOf(inputUsage, outputTokens) }]
      }
      case "message_stop":
        return [{ type: "done", stop_reason: stopReasonOf(stopReason) }]
      case "error":
        throw streamError(event, sse.data)
    }
    return []
  }
}

const decodeResponse = (response: unknown): ReadonlyArray<ModelEvent> => {
  if (stringAt(response, "type") === "error") throw streamError(response, JSON.stringify(response))
  const events: Array<ModelEvent> = []
  for (const block of arrayAt(response, "content")) {
    switch (stringAt(block, "type")) {
      case "text":
        events.push({ type: "text_delta", text: stringAt(block, "text") ?? "" })
        break
      case "thinking":
        events.push(
          { type: "reasoning_delta", text: stringAt(block, "thinking") ?? "" },
          {
            type: "reasoning_done",
            replay: { api_format: "anthropic-messages", kind: "signature", data: stringAt(block, "signature") ?? "" }
          }
        )
        break
      case "redacted_thinking":
        events.push({
          type: "reasoning_done",
          replay: { api_format: "anthropic-messages", kind: "redacted", data: stringAt(block, "data") ?? "" }
        })
        break
      case "tool_use": {
        const input = at(block, "input")
        events.push({
          type: "tool_call",
          call_id: stringAt(block, "id") ?? "",
          name: stringAt(block, "name") ?? "",
          input: typeof input === "object" && input !== null && !Array.isArray(input) ? input as Record<string, unknown> : {}
        })
        break
      }
    }
  }
  const usage = at(response, "usage")
  events.push(
    { type: "usage", usage: usageOf(usage, numberAt(usage, "output_tokens")) },
    { type: "done", stop_reason: stopReasonOf(stringAt(response, "stop_reason")) }
  )
  return events
}

export const AnthropicMessages: WireAdapter = {
  path: "/messages",
  headers: (request) => ({ "x-api-key": Redacted.value(request.apiKey), "anthropic-version": ANTHROPIC_VERSION }),
  body,
  streamDecoder,
  decodeResponse,
  errorMessage: (error) => stringAt(error, "error", "message")
}
