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
 * empty, with one reply or with one chosen by the call's body (benchmarks; `startScriptedProvider`
 * runs it outside Effect, `record: false` keeps memory flat); otherwise an unscripted call gets a
 * vendor-shaped 500.
 *
 *   baseUrl("openai-responses")        -> http://127.0.0.1:PORT/openai/v1
 *   baseUrl("openai-chat-completions") -> http://127.0.0.1:PORT/openai/v1
 *   baseUrl("anthropic-messages")      -> http://127.0.0.1:PORT/anthropic/v1
 *
 * The answers are written by src/demo/wire (shared with the demo model, `npm run demo-model`);
 * `word_delay_ms` (Reply.slowText) streams an answer word by word, for live output. A `raw` reply
 * writes the answer itself, as a broken or hostile provider would (test/support/HostileReplies.ts).
 */
import { Context, Effect, Exit, Layer, Schedule, Scope } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"
import { anthropicStream, anthropicWhole } from "../../src/demo/wire/AnthropicMessagesEncoding.ts"
import {
  type AnswerPart,
  estimatedUsage,
  type ModelAnswer,
  newId as id,
  sse,
  type StreamChunk,
  words
} from "../../src/demo/wire/ModelAnswer.ts"
import { chatStream, chatWhole } from "../../src/demo/wire/OpenAiChatEncoding.ts"
import { errorBody } from "../../src/demo/wire/ProviderErrors.ts"
import { responsesObject, responsesStream, responsesWhole } from "../../src/demo/wire/OpenAiResponsesEncoding.ts"

/** One part of a scripted model answer, in output order. */
export type ScriptedOutput = AnswerPart

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
    /** Streamed word by word, waiting this long before each word of text or reasoning. */
    readonly word_delay_ms?: number
  }
  | {
    readonly kind: "error"
    readonly status: number
    readonly message: string
    /** Sent as the `retry-after` header. */
    readonly retry_after?: string
    /** More headers of the answer (`retry-after-ms`). */
    readonly headers?: Readonly<Record<string, string>>
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
  /** Writes the answer itself: head, body, end or no end (test/support/HostileReplies.ts). */
  | {
    readonly kind: "raw"
    readonly write: (response: ServerResponse, call: RawCall) => void | Promise<void>
    readonly delay_ms?: number
  }

/** What a `raw` reply is told of its call. */
export interface RawCall {
  readonly format: ApiFormat
  readonly stream: boolean
  /** The Server-Sent Events of a whole streamed answer of `output` in the call's format, its final event last. */
  readonly streamed: (output: ReadonlyArray<ScriptedOutput>) => ReadonlyArray<string>
}

/** Shorthands for scripts. */
export const Reply = {
  text: (text: string, options: { usage?: ScriptedUsage; delay_ms?: number } = {}): ScriptedReply => ({
    kind: "answer",
    output: [{ type: "text", text }],
    ...options
  }),
  answer: (
    output: ReadonlyArray<ScriptedOutput>,
    options: { usage?: ScriptedUsage; stop?: "end_turn" | "max_tokens"; delay_ms?: number; word_delay_ms?: number } = {}
  ): ScriptedReply => ({ kind: "answer", output, ...options }),
  /** Text streamed word by word, `word_delay_ms` before each word. */
  slowText: (text: string, word_delay_ms: number): ScriptedReply => ({
    kind: "answer",
    output: [{ type: "text", text }],
    word_delay_ms
  }),
  toolCall: (name: string, input: Record<string, unknown>, call_id?: string): ScriptedReply => ({
    kind: "answer",
    output: [call_id === undefined ? { type: "tool_call", name, input } : { type: "tool_call", name, input, call_id }]
  }),
  error: (
    status: number,
    message: string,
    options: { retry_after?: string; headers?: Readonly<Record<string, string>>; delay_ms?: number } = {}
  ): ScriptedReply => ({
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
  /** When the connection of the answer closed (Date.now()), once it has. */
  closedAt: number | undefined
  /** The client's port: calls on one kept-alive connection share it. */
  readonly remotePort: number | undefined
}

/** The answer to a call no script answers: one reply, or one chosen by the call's JSON body. */
export type DefaultReply = ScriptedReply | ((body: Record<string, any>) => ScriptedReply)

export interface ScriptedProviderShape {
  readonly baseUrl: (format: ApiFormat) => string
  readonly script: (replies: ReadonlyArray<ScriptedReply>, options?: { readonly model?: string }) => Effect.Effect<void>
  readonly answerByDefault: (reply: DefaultReply) => Effect.Effect<void>
  /** Every request received so far, oldest first. */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** Waits (up to 10 s) until at least `count` requests have arrived, then returns them all. */
  readonly awaitRequests: (count: number) => Effect.Effect<ReadonlyArray<RecordedRequest>>
}

const ANY_MODEL = "*"

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

type Resolved = ModelAnswer

/** The stream of `output` cut short by the vendor's in-stream error event. */
const brokenStream = (format: ApiFormat, answer: Resolved, message: string): ReadonlyArray<string> => {
  switch (format) {
    case "openai-responses": {
      const chunks = responsesStream(answer).map((chunk) => chunk.sse)
      const response = { ...responsesObject(answer, [], "failed", id("resp_")), error: { code: "server_error", message } }
      return [...chunks.slice(0, -1), sse("response.failed", { type: "response.failed", response })]
    }
    case "openai-chat-completions": {
      const chunks = chatStream(answer, false).map((chunk) => chunk.sse)
      return [...chunks.slice(0, -2), sse(undefined, { error: { message, type: "server_error", param: null, code: null } })]
    }
    case "anthropic-messages": {
      const chunks = anthropicStream(answer).map((chunk) => chunk.sse)
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

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** Writes the chunks, waiting `wordDelayMs` before each delta (none when 0). */
const writePaced = async (response: ServerResponse, chunks: ReadonlyArray<StreamChunk>, wordDelayMs: number) => {
  for (const chunk of chunks) {
    if (response.destroyed) return
    if (chunk.delta && wordDelayMs > 0) await sleep(wordDelayMs)
    response.write(chunk.sse)
  }
}

export interface ScriptedProviderOptions {
  /** Keep every request for `requests` (default true; benchmarks turn it off to keep memory flat). */
  readonly record?: boolean
}

export const makeScriptedProvider = (options: ScriptedProviderOptions = {}) => Effect.gen(function*() {
  const queues = new Map<string, Array<ScriptedReply>>()
  const recorded: Array<RecordedRequest> = []
  let fallback: DefaultReply | undefined

  const nextReply = (body: Record<string, any>): ScriptedReply | undefined => {
    const own = queues.get(String(body.model ?? ""))
    const queue = own !== undefined && own.length > 0 ? own : queues.get(ANY_MODEL)
    return queue?.shift() ?? (typeof fallback === "function" ? fallback(body) : fallback)
  }

  const resolve = (body: Record<string, any>, reply: Extract<ScriptedReply, { kind: "answer" }>): Resolved => ({
    output: reply.output,
    model: String(body.model ?? "scripted-model"),
    stop: reply.stop ?? "end_turn",
    includeEncrypted: Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content"),
    usage: estimatedUsage(body, reply.output, reply.usage),
    ...(reply.word_delay_ms === undefined ? {} : { split: words })
  })

  const answer = (format: ApiFormat, body: Record<string, any>, reply: Extract<ScriptedReply, { kind: "answer" }>, stream: boolean) => {
    const resolved = resolve(body, reply)
    if (!stream) {
      switch (format) {
        case "openai-responses":
          return { stream: false, json: responsesWhole(resolved) } as const
        case "openai-chat-completions":
          return { stream: false, json: chatWhole(resolved) } as const
        case "anthropic-messages":
          return { stream: false, json: anthropicWhole(resolved) } as const
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
      aborted: false,
      closedAt: undefined,
      remotePort: request.socket.remotePort
    }
    if (options.record !== false) recorded.push(record)
    response.on("close", () => {
      record.closedAt = Date.now()
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

    const reply = nextReply(body)
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
          { ...(reply.retry_after === undefined ? {} : { "retry-after": reply.retry_after }), ...reply.headers }
        )
      case "raw": {
        const streamed = (output: ReadonlyArray<ScriptedOutput>) => {
          const answered = answer(format, body, { kind: "answer", output }, true)
          return answered.stream ? answered.chunks.map((chunk) => chunk.sse) : []
        }
        return reply.write(response, { format, stream: record.stream, streamed })
      }
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
        await writePaced(response, answered.chunks, reply.word_delay_ms ?? 0)
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
    Effect.callback<void>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.void))
    }),
    () =>
      Effect.callback<void>((resume) => {
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
        Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail(new Error(`fewer than ${count} requests arrived`)) }),
        Effect.orDie
      )
  }
  return provider
})

export class ScriptedProvider extends Context.Service<ScriptedProvider, ScriptedProviderShape>()("test/ScriptedProvider") {
  static readonly layer = Layer.effect(ScriptedProvider, makeScriptedProvider())
  static readonly layerWith = (options: ScriptedProviderOptions) => Layer.effect(ScriptedProvider, makeScriptedProvider(options))
}

/** For code outside Effect (benchmarks): a started provider, and `close` to stop it. */
export const startScriptedProvider = async (options: ScriptedProviderOptions = {}) => {
  const scope = Effect.runSync(Scope.make())
  const provider = await Effect.runPromise(Scope.provide(makeScriptedProvider(options), scope))
  return { provider, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
