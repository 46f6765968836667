/**
 * A scripted model provider: a real HTTP server on 127.0.0.1 (random port) that speaks the three
 * wire formats the platform calls (`openai-responses`, `openai-chat-completions`,
 * `anthropic-messages`), streamed as each vendor streams it (Server-Sent Events) or whole, and
 * answers every call with the next reply of a script. It records every request (path, headers,
 * JSON body, whether the client hung up before the answer was complete), so tests can assert on
 * what the platform sent.
 *
 * Scripts are queued per model slug (`script(replies, { model })`), so concurrent agents that use
 * different slugs never take each other's replies; replies scripted without a model serve any
 * call whose model has no queue of its own. `answerByDefault(reply)` answers once the queues are
 * empty (benchmarks; `startScriptedProvider` runs it outside Effect, `record: false` keeps memory
 * flat); otherwise an unscripted call gets a vendor-shaped 500.
 *
 *   baseUrl("openai-responses")        -> http://127.0.0.1:PORT/openai/v1
 *   baseUrl("openai-chat-completions") -> http://127.0.0.1:PORT/openai/v1
 *   baseUrl("anthropic-messages")      -> http://127.0.0.1:PORT/anthropic/v1
 */
import { Context, Effect, Exit, Layer, Schedule, Scope } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"

/** One part of a scripted model answer, in output order. */
export type ScriptedOutput =
  | { readonly type: "reasoning"; readonly text: string }
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_call"; readonly name: string; readonly input: Record<string, unknown>; readonly call_id?: string }

export interface ScriptedUsage {
  readonly input_tokens?: number
  readonly output_tokens?: number
  readonly cache_read_tokens?: number
  readonly cache_write_tokens?: number
}

/** The answer to one model call. `delay_ms` waits before answering (the client may hang up meanwhile). */
export type ScriptedReply =
  | {
    readonly kind: "answer"
    readonly output: ReadonlyArray<ScriptedOutput>
    readonly usage?: ScriptedUsage
    /** `max_tokens` ends the answer as truncated at the output cap; otherwise it ends normally. */
    readonly stop?: "end_turn" | "max_tokens"
    readonly delay_ms?: number
  }
  | {
    readonly kind: "error"
    readonly status: number
    readonly message: string
    /** Sent as the `retry-after` header. */
    readonly retry_after?: string
    readonly delay_ms?: number
  }
  /**
   * A streamed answer that breaks off: the output, then the vendor's in-stream error event
   * (`response.failed`, an `error` chunk, anthropic `event: error`). Not streamed: an HTTP 500.
   */
  | {
    readonly kind: "stream_error"
    readonly output: ReadonlyArray<ScriptedOutput>
    readonly message: string
    readonly delay_ms?: number
  }
  /** Closes the connection without answering. */
  | { readonly kind: "drop"; readonly delay_ms?: number }

/** Shorthands for scripts. */
export const Reply = {
  text: (text: string, options: { usage?: ScriptedUsage; delay_ms?: number } = {}): ScriptedReply => ({
    kind: "answer",
    output: [{ type: "text", text }],
    ...options
  }),
  answer: (
    output: ReadonlyArray<ScriptedOutput>,
    options: { usage?: ScriptedUsage; stop?: "end_turn" | "max_tokens"; delay_ms?: number } = {}
  ): ScriptedReply => ({ kind: "answer", output, ...options }),
  toolCall: (name: string, input: Record<string, unknown>, call_id?: string): ScriptedReply => ({
    kind: "answer",
    output: [call_id === undefined ? { type: "tool_call", name, input } : { type: "tool_call", name, input, call_id }]
  }),
  error: (status: number, message: string, options: { retry_after?: string; delay_ms?: number } = {}): ScriptedReply => ({
    kind: "error",
    status,
    message,
    ...options
  }),
  streamError: (output: ReadonlyArray<ScriptedOutput>, message: string): ScriptedReply => ({
    kind: "stream_error",
    output,
    message
  }),
  drop: (delay_ms?: number): ScriptedReply => (delay_ms === undefined ? { kind: "drop" } : { kind: "drop", delay_ms }),
  /** An answer that does not come within any test's time (for interruption). */
  hang: (): ScriptedReply => ({ kind: "answer", output: [{ type: "text", text: "too late" }], delay_ms: 600_000 })
}

export interface RecordedRequest {
  readonly format: ApiFormat | undefined
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The parsed JSON body (undefined when it was not JSON). */
  readonly body: Record<string, any> | undefined
  readonly stream: boolean
  /** When the request's body had arrived (Date.now()): a scripted delay counts from here. */
  readonly receivedAt: number
  /** The client closed the connection before the answer was complete. */
  aborted: boolean
}

export interface ScriptedProviderShape {
  readonly baseUrl: (format: ApiFormat) => string
  readonly script: (replies: ReadonlyArray<ScriptedReply>, options?: { readonly model?: string }) => Effect.Effect<void>
  readonly answerByDefault: (reply: ScriptedReply) => Effect.Effect<void>
  /** Every request received so far, oldest first. */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** Waits (up to 10 s) until at least `count` requests have arrived, then returns them all. */
  readonly awaitRequests: (count: number) => Effect.Effect<ReadonlyArray<RecordedRequest>>
}

const ANY_MODEL = "*"

const id = (prefix: string) => `${prefix}${randomBytes(12).toString("hex")}`

/** Text in the small pieces a vendor streams. */
const pieces = (text: string): ReadonlyArray<string> => {
  const result = text.match(/[\s\S]{1,12}/g)
  return result === null ? [""] : result
}

const formatOf = (path: string): ApiFormat | undefined => {
  switch (path) {
    case "/openai/v1/responses":
      return "openai-responses"
    case "/openai/v1/chat/completions":
      return "openai-chat-completions"
    case "/anthropic/v1/messages":
      return "anthropic-messages"
  }
  return undefined
}

interface Resolved {
  readonly output: ReadonlyArray<ScriptedOutput & { readonly call_id?: string }>
  readonly usage: Required<ScriptedUsage>
  readonly stop: "end_turn" | "max_tokens"
  readonly model: string
  readonly includeEncrypted: boolean
}

const sse = (event: string | undefined, data: unknown) =>
  `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`

// ---------------------------------------------------------------- openai-responses

const responsesItems = (answer: Resolved) =>
  answer.output.map((part) => {
    switch (part.type) {
      case "reasoning":
        return {
          type: "reasoning" as const,
          id: id("rs_"),
          summary: [{ type: "summary_text", text: part.text }],
          ...(answer.includeEncrypted ? { encrypted_content: `enc_${Buffer.from(part.text).toString("base64")}` } : {})
        }
      case "text":
        return {
          type: "message" as const,
          id: id("msg_"),
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: part.text, annotations: [] }]
        }
      case "tool_call":
        return {
          type: "function_call" as const,
          id: id("fc_"),
          call_id: part.call_id ?? id("call_"),
          name: part.name,
          arguments: JSON.stringify(part.input),
          status: "completed"
        }
    }
  })

const responsesObject = (answer: Resolved, output: ReadonlyArray<unknown>, status: string, responseId: string) => ({
  id: responseId,
  object: "response",
  created_at: Math.floor(Date.now() / 1000),
  status,
  model: answer.model,
  output,
  incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
  usage: status === "in_progress" ? null : {
    input_tokens: answer.usage.input_tokens,
    input_tokens_details: { cached_tokens: answer.usage.cache_read_tokens },
    output_tokens: answer.usage.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: answer.usage.input_tokens + answer.usage.output_tokens
  }
})

const responsesStream = (answer: Resolved): ReadonlyArray<string> => {
  const responseId = id("resp_")
  const finalStatus = answer.stop === "max_tokens" ? "incomplete" : "completed"
  const items = responsesItems(answer)
  let sequence = 0
  const event = (type: string, fields: Record<string, unknown>) => sse(type, { type, sequence_number: sequence++, ...fields })
  const chunks = [
    event("response.created", { response: responsesObject(answer, [], "in_progress", responseId) }),
    event("response.in_progress", { response: responsesObject(answer, [], "in_progress", responseId) })
  ]
  items.forEach((item, output_index) => {
    const item_id = item.id
    switch (item.type) {
      case "reasoning": {
        const text = item.summary[0].text
        chunks.push(event("response.output_item.added", { output_index, item: { type: "reasoning", id: item_id, summary: [] } }))
        chunks.push(event("response.reasoning_summary_part.added", {
          item_id,
          output_index,
          summary_index: 0,
          part: { type: "summary_text", text: "" }
        }))
        for (const delta of pieces(text)) {
          chunks.push(event("response.reasoning_summary_text.delta", { item_id, output_index, summary_index: 0, delta }))
        }
        chunks.push(event("response.reasoning_summary_text.done", { item_id, output_index, summary_index: 0, text }))
        chunks.push(event("response.reasoning_summary_part.done", {
          item_id,
          output_index,
          summary_index: 0,
          part: { type: "summary_text", text }
        }))
        break
      }
      case "message": {
        const text = item.content[0].text
        chunks.push(event("response.output_item.added", {
          output_index,
          item: { ...item, status: "in_progress", content: [] }
        }))
        chunks.push(event("response.content_part.added", {
          item_id,
          output_index,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [] }
        }))
        for (const delta of pieces(text)) {
          chunks.push(event("response.output_text.delta", { item_id, output_index, content_index: 0, delta, logprobs: [] }))
        }
        chunks.push(event("response.output_text.done", { item_id, output_index, content_index: 0, text, logprobs: [] }))
        chunks.push(event("response.content_part.done", {
          item_id,
          output_index,
          content_index: 0,
          part: { type: "output_text", text, annotations: [] }
        }))
        break
      }
      case "function_call": {
        chunks.push(event("response.output_item.added", {
          output_index,
          item: { ...item, arguments: "", status: "in_progress" }
        }))
        for (const delta of pieces(item.arguments)) {
          chunks.push(event("response.function_call_arguments.delta", { item_id, output_index, delta }))
        }
        chunks.push(event("response.function_call_arguments.done", { item_id, output_index, arguments: item.arguments }))
        break
      }
    }
    chunks.push(event("response.output_item.done", { output_index, item }))
  })
  chunks.push(event(`response.${finalStatus}`, { response: responsesObject(answer, items, finalStatus, responseId) }))
  return chunks
}

// ---------------------------------------------------------------- openai-chat-completions

const chatToolCalls = (answer: Resolved) =>
  answer.output.flatMap((part) =>
    part.type === "tool_call"
      ? [{ id: part.call_id ?? id("call_"), type: "function", function: { name: part.name, arguments: JSON.stringify(part.input) } }]
      : []
  )

const chatFinishReason = (answer: Resolved, toolCalls: number) =>
  answer.stop === "max_tokens" ? "length" : toolCalls > 0 ? "tool_calls" : "stop"

const chatUsage = (answer: Resolved) => ({
  prompt_tokens: answer.usage.input_tokens,
  completion_tokens: answer.usage.output_tokens,
  total_tokens: answer.usage.input_tokens + answer.usage.output_tokens,
  prompt_tokens_details: { cached_tokens: answer.usage.cache_read_tokens }
})

const textOf = (answer: Resolved, type: "text" | "reasoning") =>
  answer.output.flatMap((part) => part.type === type ? [part.text] : []).join("")

const chatObject = (answer: Resolved) => {
  const toolCalls = chatToolCalls(answer)
  const text = textOf(answer, "text")
  const reasoning = textOf(answer, "reasoning")
  return {
    id: id("chatcmpl-"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: text === "" ? null : text,
        refusal: null,
        ...(reasoning === "" ? {} : { reasoning_content: reasoning }),
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {})
      },
      logprobs: null,
      finish_reason: chatFinishReason(answer, toolCalls.length)
    }],
    usage: chatUsage(answer)
  }
}

const chatStream = (answer: Resolved, includeUsage: boolean): ReadonlyArray<string> => {
  const completionId = id("chatcmpl-")
  const created = Math.floor(Date.now() / 1000)
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) =>
    sse(undefined, {
      id: completionId,
      object: "chat.completion.chunk",
      created,
      model: answer.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason }]
    })
  const chunks = [chunk({ role: "assistant", content: "", refusal: null })]
  let toolIndex = 0
  for (const part of answer.output) {
    switch (part.type) {
      case "reasoning":
        for (const piece of pieces(part.text)) chunks.push(chunk({ reasoning_content: piece }))
        break
      case "text":
        for (const piece of pieces(part.text)) chunks.push(chunk({ content: piece }))
        break
      case "tool_call": {
        const index = toolIndex++
        chunks.push(chunk({
          tool_calls: [{ index, id: part.call_id ?? id("call_"), type: "function", function: { name: part.name, arguments: "" } }]
        }))
        for (const piece of pieces(JSON.stringify(part.input))) {
          chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
        }
        break
      }
    }
  }
  chunks.push(chunk({}, chatFinishReason(answer, toolIndex)))
  if (includeUsage) {
    chunks.push(sse(undefined, {
      id: completionId,
      object: "chat.completion.chunk",
      created,
      model: answer.model,
      choices: [],
      usage: chatUsage(answer)
    }))
  }
  chunks.push(sse(undefined, "[DONE]"))
  return chunks
}

// ---------------------------------------------------------------- anthropic-messages

const signatureOf = (text: string) => `sig_${createHash("sha256").update(text).digest("base64")}`

const anthropicContent = (answer: Resolved) =>
  answer.output.map((part) => {
    switch (part.type) {
      case "reasoning":
        return { type: "thinking" as const, thinking: part.text, signature: signatureOf(part.text) }
      case "text":
        return { type: "text" as const, text: part.text }
      case "tool_call":
        return { type: "tool_use" as const, id: part.call_id ?? id("toolu_"), name: part.name, input: part.input }
    }
  })

const anthropicStopReason = (answer: Resolved) =>
  answer.stop === "max_tokens"
    ? "max_tokens"
    : answer.output.some((part) => part.type === "tool_call")
    ? "tool_use"
    : "end_turn"

const anthropicUsage = (answer: Resolved) => ({
  input_tokens: answer.usage.input_tokens,
  cache_creation_input_tokens: answer.usage.cache_write_tokens,
  cache_read_input_tokens: answer.usage.cache_read_tokens,
  output_tokens: answer.usage.output_tokens
})

const anthropicObject = (answer: Resolved) => ({
  id: id("msg_"),
  type: "message",
  role: "assistant",
  model: answer.model,
  content: anthropicContent(answer),
  stop_reason: anthropicStopReason(answer),
  stop_sequence: null,
  usage: anthropicUsage(answer)
})

const anthropicStream = (answer: Resolved): ReadonlyArray<string> => {
  const event = (type: string, fields: Record<string, unknown>) => sse(type, { type, ...fields })
  const chunks = [
    event("message_start", {
      message: { ...anthropicObject(answer), content: [], stop_reason: null, usage: { ...anthropicUsage(answer), output_tokens: 1 } }
    }),
    event("ping", {})
  ]
  anthropicContent(answer).forEach((block, index) => {
    switch (block.type) {
      case "thinking":
        chunks.push(event("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }))
        for (const thinking of pieces(block.thinking)) {
          chunks.push(event("content_block_delta", { index, delta: { type: "thinking_delta", thinking } }))
        }
        chunks.push(event("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature } }))
        break
      case "text":
        chunks.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }))
        for (const text of pieces(block.text)) {
          chunks.push(event("content_block_delta", { index, delta: { type: "text_delta", text } }))
        }
        break
      case "tool_use":
        chunks.push(event("content_block_start", {
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} }
        }))
        for (const partial_json of pieces(JSON.stringify(block.input))) {
          chunks.push(event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } }))
        }
        break
    }
    chunks.push(event("content_block_stop", { index }))
  })
  chunks.push(event("message_delta", {
    delta: { stop_reason: anthropicStopReason(answer), stop_sequence: null },
    usage: { output_tokens: answer.usage.output_tokens }
  }))
  chunks.push(event("message_stop", {}))
  return chunks
}

// ---------------------------------------------------------------- errors

const openAiErrorType = (status: number) =>
  status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : status === 401 ? "authentication_error" : "invalid_request_error"

const anthropicErrorType = (status: number) => {
  switch (status) {
    case 400:
      return "invalid_request_error"
    case 401:
      return "authentication_error"
    case 403:
      return "permission_error"
    case 404:
      return "not_found_error"
    case 429:
      return "rate_limit_error"
    case 529:
      return "overloaded_error"
  }
  return "api_error"
}

const errorBody = (format: ApiFormat | undefined, status: number, message: string) =>
  format === "anthropic-messages"
    ? { type: "error", error: { type: anthropicErrorType(status), message }, request_id: id("req_") }
    : { error: { message, type: openAiErrorType(status), param: null, code: null } }

/** The stream of `output` cut short by the vendor's in-stream error event. */
const brokenStream = (format: ApiFormat, answer: Resolved, message: string): ReadonlyArray<string> => {
  switch (format) {
    case "openai-responses": {
      const chunks = responsesStream(answer)
      const response = { ...responsesObject(answer, [], "failed", id("resp_")), error: { code: "server_error", message } }
      return [...chunks.slice(0, -1), sse("response.failed", { type: "response.failed", response })]
    }
    case "openai-chat-completions": {
      const chunks = chatStream(answer, false)
      return [...chunks.slice(0, -2), sse(undefined, { error: { message, type: "server_error", param: null, code: null } })]
    }
    case "anthropic-messages": {
      const chunks = anthropicStream(answer)
      return [
        ...chunks.slice(0, -2),
        sse("error", { type: "error", error: { type: "overloaded_error", message } })
      ]
    }
  }
}

// ---------------------------------------------------------------- the server

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const missingCredentials = (format: ApiFormat, request: IncomingMessage) =>
  format === "anthropic-messages"
    ? request.headers["x-api-key"] === undefined
      ? "x-api-key header is required"
      : request.headers["anthropic-version"] === undefined
      ? "anthropic-version: header is required"
      : undefined
    : request.headers.authorization?.startsWith("Bearer ") === true
    ? undefined
    : "You didn't provide an API key."

export interface ScriptedProviderOptions {
  /** Keep every request for `requests` (default true; benchmarks turn it off to keep memory flat). */
  readonly record?: boolean
}

export const makeScriptedProvider = (options: ScriptedProviderOptions = {}) => Effect.gen(function*() {
  const queues = new Map<string, Array<ScriptedReply>>()
  const recorded: Array<RecordedRequest> = []
  let fallback: ScriptedReply | undefined

  const nextReply = (model: string): ScriptedReply | undefined => {
    const own = queues.get(model)
    const queue = own !== undefined && own.length > 0 ? own : queues.get(ANY_MODEL)
    return queue?.shift() ?? fallback
  }

  const resolve = (body: Record<string, any>, reply: Extract<ScriptedReply, { kind: "answer" }>): Resolved => {
    const outputChars = reply.output.reduce(
      (sum, part) => sum + (part.type === "tool_call" ? JSON.stringify(part.input).length + part.name.length : part.text.length),
      0
    )
    return {
      output: reply.output,
      model: String(body.model ?? "scripted-model"),
      stop: reply.stop ?? "end_turn",
      includeEncrypted: Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content"),
      usage: {
        input_tokens: reply.usage?.input_tokens ?? Math.ceil(JSON.stringify(body).length / 4),
        output_tokens: reply.usage?.output_tokens ?? Math.max(1, Math.ceil(outputChars / 4)),
        cache_read_tokens: reply.usage?.cache_read_tokens ?? 0,
        cache_write_tokens: reply.usage?.cache_write_tokens ?? 0
      }
    }
  }

  const answer = (format: ApiFormat, body: Record<string, any>, reply: Extract<ScriptedReply, { kind: "answer" }>, stream: boolean) => {
    const resolved = resolve(body, reply)
    if (!stream) {
      switch (format) {
        case "openai-responses":
          return {
            stream: false,
            json: responsesObject(resolved, responsesItems(resolved), resolved.stop === "max_tokens" ? "incomplete" : "completed", id("resp_"))
          } as const
        case "openai-chat-completions":
          return { stream: false, json: chatObject(resolved) } as const
        case "anthropic-messages":
          return { stream: false, json: anthropicObject(resolved) } as const
      }
    }
    switch (format) {
      case "openai-responses":
        return { stream: true, chunks: responsesStream(resolved) } as const
      case "openai-chat-completions":
        return { stream: true, chunks: chatStream(resolved, body.stream_options?.include_usage === true) } as const
      case "anthropic-messages":
        return { stream: true, chunks: anthropicStream(resolved) } as const
    }
  }

  const sendJson = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    response.writeHead(status, { "content-type": "application/json", ...headers })
    response.end(JSON.stringify(body))
  }

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? "/").split("?")[0]
    const format = formatOf(path)
    const text = await readBody(request)
    let body: Record<string, any> | undefined
    try {
      const parsed: unknown = JSON.parse(text)
      body = typeof parsed === "object" && parsed !== null ? parsed as Record<string, any> : undefined
    } catch {
      body = undefined
    }
    const record: RecordedRequest = {
      format,
      method: request.method ?? "",
      path,
      headers: { ...request.headers },
      body,
      stream: body?.stream === true,
      receivedAt: Date.now(),
      aborted: false
    }
    if (options.record !== false) recorded.push(record)
    response.on("close", () => {
      if (!response.writableFinished) record.aborted = true
    })

    if (format === undefined || request.method !== "POST") {
      return sendJson(response, 404, errorBody(format, 404, `Unknown request URL: ${request.method} ${path}`))
    }
    const credentialsProblem = missingCredentials(format, request)
    if (credentialsProblem !== undefined) {
      const status = format === "anthropic-messages" && request.headers["x-api-key"] !== undefined ? 400 : 401
      return sendJson(response, status, errorBody(format, status, credentialsProblem))
    }
    if (body === undefined) return sendJson(response, 400, errorBody(format, 400, "The request body is not valid JSON."))

    const reply = nextReply(String(body.model ?? ""))
    if (reply === undefined) {
      return sendJson(response, 500, errorBody(format, 500, `The scripted provider has no reply left for model ${body.model}`))
    }
    if (reply.delay_ms !== undefined && reply.delay_ms > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, reply.delay_ms)
        response.on("close", () => {
          clearTimeout(timer)
          resolve()
        })
      })
      if (response.destroyed || record.aborted) return
    }
    switch (reply.kind) {
      case "drop":
        request.socket.destroy()
        return
      case "error":
        return sendJson(
          response,
          reply.status,
          errorBody(format, reply.status, reply.message),
          reply.retry_after === undefined ? {} : { "retry-after": reply.retry_after }
        )
      case "stream_error": {
        if (!record.stream) return sendJson(response, 500, errorBody(format, 500, reply.message))
        response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" })
        for (const chunk of brokenStream(format, resolve(body, { kind: "answer", output: reply.output }), reply.message)) {
          response.write(chunk)
        }
        response.end()
        return
      }
      case "answer": {
        const answered = answer(format, body, reply, record.stream)
        if (!answered.stream) return sendJson(response, 200, answered.json)
        response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" })
        for (const chunk of answered.chunks) response.write(chunk)
        response.end()
        return
      }
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, errorBody(undefined, 500, String(error)))
      else response.destroy()
    })
  })
  yield* Effect.acquireRelease(
    Effect.async<void>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.void))
    }),
    () =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
  const port = (server.address() as AddressInfo).port
  const origin = `http://127.0.0.1:${port}`

  const provider: ScriptedProviderShape = {
    baseUrl: (format) => format === "anthropic-messages" ? `${origin}/anthropic/v1` : `${origin}/openai/v1`,
    script: (replies, options) =>
      Effect.sync(() => {
        const key = options?.model ?? ANY_MODEL
        const queue = queues.get(key) ?? []
        queue.push(...replies)
        queues.set(key, queue)
      }),
    answerByDefault: (reply) => Effect.sync(() => (fallback = reply)),
    requests: Effect.sync(() => [...recorded]),
    awaitRequests: (count) =>
      Effect.sync(() => [...recorded]).pipe(
        Effect.filterOrFail((all) => all.length >= count, () => "waiting"),
        Effect.retry(Schedule.spaced("5 millis")),
        Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`fewer than ${count} requests arrived`) }),
        Effect.orDie
      )
  }
  return provider
})

export class ScriptedProvider extends Context.Tag("test/ScriptedProvider")<ScriptedProvider, ScriptedProviderShape>() {
  static readonly layer = Layer.scoped(ScriptedProvider, makeScriptedProvider())
  static readonly layerWith = (options: ScriptedProviderOptions) => Layer.scoped(ScriptedProvider, makeScriptedProvider(options))
}

/** For code outside Effect (benchmarks): a started provider, and `close` to stop it. */
export const startScriptedProvider = async (options: ScriptedProviderOptions = {}) => {
  const scope = Effect.runSync(Scope.make())
  const provider = await Effect.runPromise(Scope.extend(makeScriptedProvider(options), scope))
  return { provider, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
