/**
 * What the demo model reads from a request in either OpenAI format (Responses `input`, Chat
 * Completions `messages`): the tools offered, the last user message, and whether the
 * conversation ends with a tool's result (then the model answers from it).
 */
import type { ApiFormat } from "../domain/configuration/ModelProviderConfigs.ts"

export interface ToolResult {
  readonly name: string
  readonly output: string
}

export interface DemoRequest {
  readonly model: string
  readonly stream: boolean
  /** Chat Completions: the usage chunk was asked for (`stream_options.include_usage`). */
  readonly includeUsage: boolean
  /** Responses: encrypted reasoning was asked for. */
  readonly includeEncrypted: boolean
  readonly tools: ReadonlyArray<string>
  /** The text of the last user message ("" when there is none). */
  readonly lastUserText: string
  /** The result the conversation ends with, when its last item is a tool's result. */
  readonly endsWithToolResult: ToolResult | undefined
}

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const array = (value: unknown): ReadonlyArray<unknown> => Array.isArray(value) ? value : []

const string = (value: unknown): string => typeof value === "string" ? value : ""

/** The text of a message's content: a string, or parts with `text`. */
const contentText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : array(content).map((part) => isObject(part) ? string(part.text) : "").filter((text) => text !== "").join("\n")

interface Item {
  readonly kind: "user" | "assistant" | "tool_call" | "tool_result" | "other"
  readonly text: string
  readonly callId: string
  readonly name: string
}

const item = (kind: Item["kind"], fields: Partial<Item> = {}): Item => ({ kind, text: "", callId: "", name: "", ...fields })

const responsesItems = (body: Json): ReadonlyArray<Item> =>
  typeof body.input === "string"
    ? [item("user", { text: body.input })]
    : array(body.input).map((entry) => {
      if (!isObject(entry)) return item("other")
      if (entry.type === "function_call") return item("tool_call", { callId: string(entry.call_id), name: string(entry.name) })
      if (entry.type === "function_call_output") {
        return item("tool_result", { callId: string(entry.call_id), text: contentText(entry.output) })
      }
      if (entry.role === "user") return item("user", { text: contentText(entry.content) })
      if (entry.role === "assistant") return item("assistant", { text: contentText(entry.content) })
      return item("other")
    })

const chatItems = (body: Json): ReadonlyArray<Item> =>
  array(body.messages).flatMap((message): ReadonlyArray<Item> => {
    if (!isObject(message)) return [item("other")]
    switch (message.role) {
      case "user":
        return [item("user", { text: contentText(message.content) })]
      case "assistant":
        return [
          item("assistant", { text: contentText(message.content) }),
          ...array(message.tool_calls).map((call) =>
            isObject(call) && isObject(call.function)
              ? item("tool_call", { callId: string(call.id), name: string(call.function.name) })
              : item("other")
          )
        ]
      case "tool":
        return [item("tool_result", { callId: string(message.tool_call_id), text: contentText(message.content) })]
    }
    return [item("other")]
  })

const toolNames = (format: ApiFormat, body: Json): ReadonlyArray<string> =>
  array(body.tools).flatMap((tool) => {
    if (!isObject(tool)) return []
    const name = format === "openai-chat-completions" && isObject(tool.function) ? tool.function.name : tool.name
    return typeof name === "string" ? [name] : []
  })

export const readDemoRequest = (format: ApiFormat, body: Json): DemoRequest => {
  const items = format === "openai-chat-completions" ? chatItems(body) : responsesItems(body)
  const last = items[items.length - 1]
  const lastUser = items.findLast((entry) => entry.kind === "user")
  const endsWithToolResult = last?.kind === "tool_result"
    ? {
      name: items.find((entry) => entry.kind === "tool_call" && entry.callId === last.callId)?.name ?? "the tool",
      output: last.text
    }
    : undefined
  return {
    model: string(body.model) || "demo",
    stream: body.stream === true,
    includeUsage: isObject(body.stream_options) && body.stream_options.include_usage === true,
    includeEncrypted: array(body.include).includes("reasoning.encrypted_content"),
    tools: toolNames(format, body),
    lastUserText: lastUser?.text ?? "",
    endsWithToolResult
  }
}
