/**
 * `anthropic-messages`: POST {base_url}/messages (base_url is the API root with its version,
 * e.g. https://api.anthropic.com/v1). Cache breakpoints on the tools, the system prompt and the
 * last message; extended thinking from the reasoning effort, its blocks replayed with their
 * signatures. docs/model-adapters.md.
 */
import { Redacted } from "effect"
import { decodeResponse, streamDecoder } from "./AnthropicMessagesDecoding.ts"
import type { ConversationItem, ModelRequest } from "./ModelMessages.ts"
import { reasoningEffortOf } from "./ModelMessages.ts"
import type { WireAdapter } from "./WireAdapter.ts"
import { JsonElements, jsonWithArray, keptFold, withField } from "./WireJson.ts"

const ANTHROPIC_VERSION = "2023-06-01"

/** `max_tokens` is required by this format: sent when the model's output cap is unknown. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 8192

/** Thinking budget per reasoning effort, before the cap that keeps room for the answer. */
const THINKING_BUDGETS: Readonly<Record<string, number>> = {
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
type Role = "user" | "assistant"

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

const blocksOf = (item: ConversationItem): { role: Role; blocks: ReadonlyArray<Block> } => {
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

/** An item's blocks as JSON, with which of them are thinking. */
interface ItemBlocksJson {
  readonly role: Role
  readonly blocks: ReadonlyArray<string>
  readonly thinking: ReadonlyArray<boolean>
}

const blocksJson = (item: ConversationItem): ItemBlocksJson => {
  const { blocks, role } = blocksOf(item)
  return { role, blocks: blocks.map((block) => JSON.stringify(block)), thinking: blocks.map(isThinking) }
}

/** A message's JSON up to its blocks. */
const MESSAGE_OPENING: Readonly<Record<Role, string>> = {
  user: `{"role":"user","content":[`,
  assistant: `{"role":"assistant","content":[`
}

/** A message the next items of its role still join: its blocks' JSON, and which of them are thinking. */
interface OpenMessage {
  readonly role: Role
  readonly blocks: Array<string>
  readonly thinking: Array<boolean>
}

const messageJson = (role: Role, blocks: ReadonlyArray<string>) => `${MESSAGE_OPENING[role]}${blocks.join(",")}]}`

/** The messages folded so far, and the last one, still open. */
interface MessagesFold {
  readonly messages: JsonElements
  open: OpenMessage | undefined
}

/**
 * The conversation's messages, folded over its items and kept per array of items (WireJson.ts):
 * consecutive items of one role make one message.
 */
const messagesOf = keptFold<MessagesFold>({
  start: () => ({ messages: JsonElements.empty(), open: undefined }),
  copy: (fold) => ({
    messages: fold.messages.copy(),
    open: fold.open && { role: fold.open.role, blocks: [...fold.open.blocks], thinking: [...fold.open.thinking] }
  }),
  step: (fold, item) => {
    const { blocks, role, thinking } = blocksJson(item)
    if (blocks.length === 0) return
    if (fold.open !== undefined && fold.open.role === role) {
      fold.open.blocks.push(...blocks)
      fold.open.thinking.push(...thinking)
      return
    }
    if (fold.open !== undefined) fold.messages.push(messageJson(fold.open.role, fold.open.blocks))
    fold.open = { role, blocks: [...blocks], thinking: [...thinking] }
  },
  settle: (fold) => fold.messages.settle()
})

/**
 * The messages as JSON chunks: the last message's last block that is not thinking carries the
 * cache breakpoint (when the request caches), on a copy of that block's JSON.
 */
const messagesJson = (request: ModelRequest): Array<Buffer> => {
  const { messages, open } = messagesOf(request.conversation)
  if (open === undefined) return messages.chunks([])
  const control = cacheControl(request)
  const index = control === undefined ? -1 : open.thinking.lastIndexOf(false)
  const blocks = index < 0 ? open.blocks : open.blocks.map((block, at) => at === index ? withField(block, "cache_control", control) : block)
  return messages.chunks([messageJson(open.role, blocks)])
}

/** The thinking budget for the request's effort (reasoningEffortOf), or undefined when thinking is off or cannot fit. */
const thinkingBudget = (effort: string | undefined, maxTokens: number) => {
  if (effort === undefined) return undefined
  const budget = Math.min(THINKING_BUDGETS[effort] ?? THINKING_BUDGETS.medium, maxTokens - ANSWER_RESERVE)
  return budget >= MIN_THINKING_BUDGET ? budget : undefined
}

const body = (request: ModelRequest, stream: boolean): Array<Buffer> => {
  const control = cacheControl(request)
  const maxTokens = request.maxOutputTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS
  const budget = thinkingBudget(reasoningEffortOf(request), maxTokens)
  return jsonWithArray(
    {
      model: request.model,
      max_tokens: maxTokens,
      system: [{ type: "text", text: request.instruction, ...(control === undefined ? {} : { cache_control: control }) }],
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
    },
    "messages",
    messagesJson(request)
  )
}

export const AnthropicMessages: WireAdapter = {
  path: "/messages",
  headers: (request) => ({ "x-api-key": Redacted.value(request.apiKey), "anthropic-version": ANTHROPIC_VERSION }),
  body,
  streamDecoder,
  decodeResponse
}
