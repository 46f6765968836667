/**
 * A model's answer before it is put on a vendor's wire: the output parts in order, the token
 * usage, how it stopped. The encoders beside this file write it in each wire format, whole or as
 * the Server-Sent Events the vendor streams. The demo model (src/demo/) and the scripted provider
 * of the tests share them.
 */
import { randomBytes } from "node:crypto"

/** One part of an answer, in output order. */
export type AnswerPart =
  | { readonly type: "reasoning"; readonly text: string }
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_call"; readonly name: string; readonly input: Record<string, unknown>; readonly call_id?: string }

export interface AnswerUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_read_tokens: number
  readonly cache_write_tokens: number
}

export interface ModelAnswer {
  readonly output: ReadonlyArray<AnswerPart>
  readonly usage: AnswerUsage
  /** `max_tokens`: truncated at the output cap. */
  readonly stop: "end_turn" | "max_tokens"
  /** The model slug the request named. */
  readonly model: string
  /** openai-responses: the request asked for `reasoning.encrypted_content`. */
  readonly includeEncrypted: boolean
  /** How text and reasoning are cut into streamed deltas (default: pieces of 12 characters). */
  readonly split?: (text: string) => ReadonlyArray<string>
}

/** One streamed Server-Sent Event; `delta` marks the events that carry a piece of text or reasoning. */
export interface StreamChunk {
  readonly sse: string
  readonly delta: boolean
}

export const newId = (prefix: string) => `${prefix}${randomBytes(12).toString("hex")}`

/** Text in the small pieces a vendor streams. */
export const pieces = (text: string): ReadonlyArray<string> => {
  const result = text.match(/[\s\S]{1,12}/g)
  return result === null ? [""] : result
}

/** Text cut after each word (its following spaces kept), for a stream that goes word by word. */
export const words = (text: string): ReadonlyArray<string> => {
  const result = text.match(/\S+\s*|\s+/g)
  return result === null ? [""] : result
}

export const splitOf = (answer: ModelAnswer) => answer.split ?? pieces

export const sse = (event: string | undefined, data: unknown) =>
  `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`

/** Usage from the request's and the output's sizes (about 4 characters a token), where not given. */
export const estimatedUsage = (
  requestBody: unknown,
  output: ReadonlyArray<AnswerPart>,
  given: Partial<AnswerUsage> = {}
): AnswerUsage => {
  const outputChars = output.reduce(
    (sum, part) => sum + (part.type === "tool_call" ? JSON.stringify(part.input).length + part.name.length : part.text.length),
    0
  )
  return {
    input_tokens: given.input_tokens ?? Math.ceil(JSON.stringify(requestBody).length / 4),
    output_tokens: given.output_tokens ?? Math.max(1, Math.ceil(outputChars / 4)),
    cache_read_tokens: given.cache_read_tokens ?? 0,
    cache_write_tokens: given.cache_write_tokens ?? 0
  }
}
