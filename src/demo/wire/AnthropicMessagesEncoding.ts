/** A ModelAnswer as the Anthropic Messages API writes it (`POST /messages`): whole, or streamed. */
import { createHash } from "node:crypto"
import { type ModelAnswer, newId, pieces, splitOf, sse, type StreamChunk } from "./ModelAnswer.ts"

const signatureOf = (text: string) => `sig_${createHash("sha256").update(text).digest("base64")}`

const anthropicContent = (answer: ModelAnswer) =>
  answer.output.map((part) => {
    switch (part.type) {
      case "reasoning":
        return { type: "thinking" as const, thinking: part.text, signature: signatureOf(part.text) }
      case "text":
        return { type: "text" as const, text: part.text }
      case "tool_call":
        return { type: "tool_use" as const, id: part.call_id ?? newId("toolu_"), name: part.name, input: part.input }
    }
  })

const anthropicStopReason = (answer: ModelAnswer) =>
  answer.stop === "max_tokens"
    ? "max_tokens"
    : answer.output.some((part) => part.type === "tool_call")
    ? "tool_use"
    : "end_turn"

const anthropicUsage = (answer: ModelAnswer) => ({
  input_tokens: answer.usage.input_tokens,
  cache_creation_input_tokens: answer.usage.cache_write_tokens,
  cache_read_input_tokens: answer.usage.cache_read_tokens,
  output_tokens: answer.usage.output_tokens
})

/** The whole `message` object. */
export const anthropicWhole = (answer: ModelAnswer) => ({
  id: newId("msg_"),
  type: "message",
  role: "assistant",
  model: answer.model,
  content: anthropicContent(answer),
  stop_reason: anthropicStopReason(answer),
  stop_sequence: null,
  usage: anthropicUsage(answer)
})

/** The message as its stream of events, `message_start` to `message_stop`. */
export const anthropicStream = (answer: ModelAnswer): ReadonlyArray<StreamChunk> => {
  const split = splitOf(answer)
  const event = (type: string, fields: Record<string, unknown>, delta = false): StreamChunk => ({
    sse: sse(type, { type, ...fields }),
    delta
  })
  const chunks = [
    event("message_start", {
      message: { ...anthropicWhole(answer), content: [], stop_reason: null, usage: { ...anthropicUsage(answer), output_tokens: 1 } }
    }),
    event("ping", {})
  ]
  anthropicContent(answer).forEach((block, index) => {
    switch (block.type) {
      case "thinking":
        chunks.push(event("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }))
        for (const thinking of split(block.thinking)) {
          chunks.push(event("content_block_delta", { index, delta: { type: "thinking_delta", thinking } }, true))
        }
        chunks.push(event("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature } }))
        break
      case "text":
        chunks.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }))
        for (const text of split(block.text)) {
          chunks.push(event("content_block_delta", { index, delta: { type: "text_delta", text } }, true))
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
