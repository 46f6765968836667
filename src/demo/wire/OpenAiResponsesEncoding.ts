/** A ModelAnswer as the OpenAI Responses API writes it (`POST /responses`): whole, or streamed. */
import { type ModelAnswer, newId, pieces, splitOf, sse, type StreamChunk } from "./ModelAnswer.ts"

export const responsesItems = (answer: ModelAnswer) =>
  answer.output.map((part) => {
    switch (part.type) {
      case "reasoning":
        return {
          type: "reasoning" as const,
          id: newId("rs_"),
          summary: [{ type: "summary_text", text: part.text }],
          ...(answer.includeEncrypted ? { encrypted_content: `enc_${Buffer.from(part.text).toString("base64")}` } : {})
        }
      case "text":
        return {
          type: "message" as const,
          id: newId("msg_"),
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: part.text, annotations: [] }]
        }
      case "tool_call":
        return {
          type: "function_call" as const,
          id: newId("fc_"),
          call_id: part.call_id ?? newId("call_"),
          name: part.name,
          arguments: JSON.stringify(part.input),
          status: "completed"
        }
    }
  })

export const finalStatusOf = (answer: ModelAnswer) => answer.stop === "max_tokens" ? "incomplete" : "completed"

export const responsesObject = (answer: ModelAnswer, output: ReadonlyArray<unknown>, status: string, responseId: string) => ({
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

/** The whole response object. */
export const responsesWhole = (answer: ModelAnswer) =>
  responsesObject(answer, responsesItems(answer), finalStatusOf(answer), newId("resp_"))

/** The response as its stream of events, `response.created` to `response.completed`. */
export const responsesStream = (answer: ModelAnswer): ReadonlyArray<StreamChunk> => {
  const responseId = newId("resp_")
  const finalStatus = finalStatusOf(answer)
  const items = responsesItems(answer)
  const split = splitOf(answer)
  let sequence = 0
  const event = (type: string, fields: Record<string, unknown>, delta = false): StreamChunk => ({
    sse: sse(type, { type, sequence_number: sequence++, ...fields }),
    delta
  })
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
        for (const delta of split(text)) {
          chunks.push(event("response.reasoning_summary_text.delta", { item_id, output_index, summary_index: 0, delta }, true))
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
        for (const delta of split(text)) {
          chunks.push(event("response.output_text.delta", { item_id, output_index, content_index: 0, delta, logprobs: [] }, true))
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
