/**
 * Replies of a broken or hostile model provider, for the scripted provider (`raw` replies,
 * test/support/ScriptedProvider.ts): streams that never end, answers far too large, heads or
 * bodies that stall, error bodies of hundreds of megabytes. Each writes with the socket's
 * backpressure and stops when the client hangs up; `written` counts the bytes it handed the socket.
 */
import type { ServerResponse } from "node:http"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"
import type { ScriptedOutput, ScriptedReply } from "./ScriptedProvider.ts"

/** What a hostile reply wrote, for the test to check. */
export interface Written {
  bytes: number
}

const SSE_HEAD = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" }

/** Writes `chunk`, waiting for the socket to drain when it is full; false once the client hung up. */
const write = (response: ServerResponse, chunk: string | Buffer, written: Written) =>
  new Promise<boolean>((resolve) => {
    if (response.destroyed) return resolve(false)
    written.bytes += Buffer.byteLength(chunk)
    if (response.write(chunk)) return resolve(true)
    const done = () => {
      response.off("drain", done)
      response.off("close", done)
      resolve(!response.destroyed)
    }
    response.on("drain", done)
    response.on("close", done)
  })

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** One text delta event of `format` carrying `text`. */
export const textDelta = (format: ApiFormat, text: string) => {
  switch (format) {
    case "openai-responses":
      return `event: response.output_text.delta\ndata: ${JSON.stringify({ type: "response.output_text.delta", delta: text })}\n\n`
    case "openai-chat-completions":
      return `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`
    case "anthropic-messages":
      return `event: content_block_delta\ndata: ${
        JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })
      }\n\n`
  }
}

/** An event of `format` that the platform does not read (openai-responses `response.in_progress`, anthropic `ping`). */
const ignoredEvent = (format: ApiFormat, padding: string) => {
  switch (format) {
    case "openai-responses":
      return `event: response.in_progress\ndata: ${JSON.stringify({ type: "response.in_progress", padding })}\n\n`
    case "openai-chat-completions":
      return `data: ${JSON.stringify({ choices: [], padding })}\n\n`
    case "anthropic-messages":
      return `event: ping\ndata: ${JSON.stringify({ type: "ping", padding })}\n\n`
  }
}

/** The events that open an answer of `format` before its first text (anthropic: the message and its text block). */
const opening = (format: ApiFormat) =>
  format === "anthropic-messages"
    ? `event: message_start\ndata: ${
      JSON.stringify({ type: "message_start", message: { id: "msg_1", usage: { input_tokens: 1, output_tokens: 0 } } })
    }\n\nevent: content_block_start\ndata: ${
      JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
    }\n\n`
    : ""

/** An SSE event of `format` (anthropic names its events; chat completions sends data alone). */
const sseEvent = (format: ApiFormat, data: Record<string, unknown>) =>
  format === "anthropic-messages" ? `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n` : `data: ${JSON.stringify(data)}\n\n`

/** A Chat Completions chunk of one tool call's delta. */
const chatToolDelta = (call: Record<string, unknown>) => ({ choices: [{ index: 0, delta: { tool_calls: [call] } }] })

/**
 * The events of tool call `index` of `format` (openai-chat-completions or anthropic-messages):
 * its start (id and name), its arguments (a JSON object of one string of `length` characters) in
 * deltas of at most `deltaBytes`, then (anthropic) its block's stop.
 */
function* toolCallEvents(format: ApiFormat, index: number, length: number, deltaBytes: number) {
  const id = `call_${index}`
  const start = format === "anthropic-messages"
    ? { type: "content_block_start", index, content_block: { type: "tool_use", id, name: "lookup", input: {} } }
    : chatToolDelta({ index, id, type: "function", function: { name: "lookup", arguments: "" } })
  const delta = (piece: string) =>
    format === "anthropic-messages"
      ? { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } }
      : chatToolDelta({ index, function: { arguments: piece } })
  yield sseEvent(format, start)
  yield sseEvent(format, delta('{"q":"'))
  for (let sent = 0; sent < length; sent += deltaBytes) yield sseEvent(format, delta("x".repeat(Math.min(deltaBytes, length - sent))))
  yield sseEvent(format, delta('"}'))
  if (format === "anthropic-messages") yield sseEvent(format, { type: "content_block_stop", index })
}

/** The events that end an answer of tool calls of `format`. */
const toolCallsEnd = (format: ApiFormat) =>
  format === "anthropic-messages"
    ? sseEvent(format, { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 1 } }) +
      sseEvent(format, { type: "message_stop" })
    : sseEvent(format, { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }) + "data: [DONE]\n\n"

export const Hostile = {
  /**
   * 200 and a stream of `event` (text deltas of `eventBytes` characters, or events the platform
   * ignores) that never ends.
   */
  endless: (event: "text" | "ignored", eventBytes: number, written: Written): ScriptedReply => ({
    kind: "raw",
    write: async (response, call) => {
      response.writeHead(200, SSE_HEAD)
      const chunk = event === "text" ? textDelta(call.format, "x".repeat(eventBytes)) : ignoredEvent(call.format, "x".repeat(eventBytes))
      if (!(await write(response, opening(call.format), written))) return
      while (await write(response, chunk, written)) { /* until the client hangs up */ }
    }
  }),
  /**
   * A whole answer of `text` in deltas of `eventBytes` characters, its final event, then the end
   * (the answer may be any size: it is written as it goes).
   */
  large: (text: { readonly char: string; readonly length: number }, eventBytes: number, written: Written): ScriptedReply => ({
    kind: "raw",
    write: async (response, call) => {
      response.writeHead(200, SSE_HEAD)
      // The whole answer of one short text, its deltas replaced by ours.
      const whole = call.streamed([{ type: "text", text: "." }])
      const delta = whole.findIndex((chunk) => chunk.includes('"."'))
      for (const chunk of whole.slice(0, delta)) if (!(await write(response, chunk, written))) return
      for (let sent = 0; sent < text.length; sent += eventBytes) {
        const piece = text.char.repeat(Math.min(eventBytes, text.length - sent))
        if (!(await write(response, textDelta(call.format, piece), written))) return
      }
      for (const chunk of whole.slice(delta + 1)) if (!(await write(response, chunk, written))) return
      response.end()
    }
  }),
  /**
   * A whole answer (openai-chat-completions or anthropic-messages) of `count` tool calls, each of
   * arguments `{"q":"x…"}` with `length` x's in deltas of at most `deltaBytes`, then its final
   * event and the end.
   */
  toolCalls: (
    calls: { readonly count: number; readonly length: number; readonly deltaBytes: number },
    written: Written
  ): ScriptedReply => ({
    kind: "raw",
    write: async (response, call) => {
      response.writeHead(200, SSE_HEAD)
      const start = call.format === "anthropic-messages"
        ? sseEvent(call.format, { type: "message_start", message: { id: "msg_1", usage: { input_tokens: 1, output_tokens: 0 } } })
        : ""
      if (!(await write(response, start, written))) return
      for (let index = 0; index < calls.count; index++) {
        for (const event of toolCallEvents(call.format, index, calls.length, calls.deltaBytes)) {
          if (!(await write(response, event, written))) return
        }
      }
      if (await write(response, toolCallsEnd(call.format), written)) response.end()
    }
  }),
  /** The head of a 200 stream, then nothing, never ending. */
  stallAfterHead: (): ScriptedReply => ({
    kind: "raw",
    write: (response) => {
      response.writeHead(200, SSE_HEAD)
      response.flushHeaders()
    }
  }),
  /** A text delta of one character every `intervalMs`, never ending. */
  drip: (intervalMs: number, written: Written): ScriptedReply => ({
    kind: "raw",
    write: async (response, call) => {
      response.writeHead(200, SSE_HEAD)
      if (!(await write(response, opening(call.format), written))) return
      while (await write(response, textDelta(call.format, "x"), written)) await sleep(intervalMs)
    }
  }),
  /**
   * Whole streamed answers of `outputs`, one after the other (each with its final event), then
   * the body's end (`end: true`, or after `end` ms), or (`end: false`) no end: the connection
   * stays open.
   */
  answers: (outputs: ReadonlyArray<ReadonlyArray<ScriptedOutput>>, options: { readonly end: boolean | number }): ScriptedReply => ({
    kind: "raw",
    write: async (response, call) => {
      const written: Written = { bytes: 0 }
      response.writeHead(200, SSE_HEAD)
      for (const output of outputs) {
        for (const chunk of call.streamed(output)) if (!(await write(response, chunk, written))) return
      }
      if (typeof options.end === "number") await sleep(options.end)
      if (options.end !== false) response.end()
    }
  }),
  /** `status` with the start of a JSON error body, then a space every `intervalMs`, never ending. */
  errorNeverEnds: (status: number, intervalMs: number): ScriptedReply => ({
    kind: "raw",
    write: async (response) => {
      const written: Written = { bytes: 0 }
      response.writeHead(status, { "content-type": "application/json" })
      if (!(await write(response, '{"error":{"message":"the provider is', written))) return
      while (await write(response, " ", written)) await sleep(intervalMs)
    }
  }),
  /**
   * `status` with a body of `bytes` bytes: a JSON error whose message is that long (`json`), or
   * plain text; then the end.
   */
  hugeError: (status: number, bytes: number, json: boolean, written: Written): ScriptedReply => ({
    kind: "raw",
    write: async (response) => {
      response.writeHead(status, { "content-type": json ? "application/json" : "text/plain" })
      const start = json ? '{"error":{"message":"' : ""
      const end = json ? '"}}' : ""
      if (!(await write(response, start, written))) return
      const piece = Buffer.alloc(64 * 1024, "y")
      for (let sent = 0; sent < bytes; sent += piece.length) {
        if (!(await write(response, sent + piece.length > bytes ? piece.subarray(0, bytes - sent) : piece, written))) return
      }
      if (await write(response, end, written)) response.end()
    }
  })
}
