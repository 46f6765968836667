/** A ModelAnswer as the OpenAI Chat Completions API writes it (`POST /chat/completions`): whole, or streamed. */
import { type ModelAnswer, newId, pieces, splitOf, sse, type StreamChunk } from "./ModelAnswer.ts"

const chatToolCalls = (answer: ModelAnswer) =>
  answer.output.flatMap((part) =>
    part.type === "tool_call"
      ? [{ id: part.call_id ?? newId("call_"), type: "function", function: { name: part.name, arguments: JSON.stringify(part.input) } }]
      : []
  )

const chatFinishReason = (answer: ModelAnswer, toolCalls: number) =>
  answer.stop === "max_tokens" ? "length" : toolCalls > 0 ? "tool_calls" : "stop"

const chatUsage = (answer: ModelAnswer) => ({
  prompt_tokens: answer.usage.input_tokens,
  completion_tokens: answer.usage.output_tokens,
  total_tokens: answer.usage.input_tokens + answer.usage.output_tokens,
  prompt_tokens_details: { cached_tokens: answer.usage.cache_read_tokens }
})

const textOf = (answer: ModelAnswer, type: "text" | "reasoning") =>
  answer.output.flatMap((part) => part.type === type ? [part.text] : []).join("")

/** The whole `chat.completion` object. */
export const chatWhole = (answer: ModelAnswer) => {
  const toolCalls = chatToolCalls(answer)
  const text = textOf(answer, "text")
  const reasoning = textOf(answer, "reasoning")
  return {
    id: newId("chatcmpl-"),
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

/** The `chat.completion.chunk` stream, ending `data: [DONE]`; the usage chunk when the request asked for it. */
export const chatStream = (answer: ModelAnswer, includeUsage: boolean): ReadonlyArray<StreamChunk> => {
  const completionId = newId("chatcmpl-")
  const created = Math.floor(Date.now() / 1000)
  const split = splitOf(answer)
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null, isDelta = false): StreamChunk => ({
    sse: sse(undefined, {
      id: completionId,
      object: "chat.completion.chunk",
      created,
      model: answer.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason }]
    }),
    delta: isDelta
  })
  const chunks = [chunk({ role: "assistant", content: "", refusal: null })]
  let toolIndex = 0
  for (const part of answer.output) {
    switch (part.type) {
      case "reasoning":
        for (const piece of split(part.text)) chunks.push(chunk({ reasoning_content: piece }, null, true))
        break
      case "text":
        for (const piece of split(part.text)) chunks.push(chunk({ content: piece }, null, true))
        break
      case "tool_call": {
        const index = toolIndex++
        chunks.push(chunk({
          tool_calls: [{ index, id: part.call_id ?? newId("call_"), type: "function", function: { name: part.name, arguments: "" } }]
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
    chunks.push({
      sse: sse(undefined, {
        id: completionId,
        object: "chat.completion.chunk",
        created,
        model: answer.model,
        choices: [],
        usage: chatUsage(answer)
      }),
      delta: false
    })
  }
  chunks.push({ sse: sse(undefined, "[DONE]"), delta: false })
  return chunks
}
