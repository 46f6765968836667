/**
 * The demo model's answers: deterministic, from the last user message (docs/demo-model.md).
 *
 * - `call <tool> {json}` (the whole message): calls that tool with that input, when the request offers it.
 * - `run <command>` (the whole message): calls `run_command` with `{"command": "<command>"}`, when offered.
 * - after a tool's result: says what the tool answered.
 * - otherwise: repeats the message (`You said: ...`).
 * - `think` anywhere: a reasoning summary comes first; `slowly` anywhere: the text is streamed
 *   one word every WORD_DELAY.
 */
import { Duration } from "effect"
import type { DemoRequest } from "./DemoRequest.ts"
import type { AnswerPart } from "./wire/ModelAnswer.ts"

export const WORD_DELAY = Duration.millis(200)

/** A tool's output longer than this is cut in the answer. */
const MAX_QUOTED = 500

export interface DemoAnswer {
  readonly output: ReadonlyArray<AnswerPart>
  /** Streamed one word every WORD_DELAY. */
  readonly slow: boolean
}

const CALL = /^\s*call\s+([A-Za-z0-9_.-]+)\s*(\{[\s\S]*\})?\s*$/i
const RUN = /^\s*run\s+([\s\S]+)$/i

const quote = (text: string) => text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}… (${text.length} characters)` : text

const offered = (request: DemoRequest) =>
  request.tools.length === 0 ? "this agent offers no tools" : `the tools offered are ${request.tools.join(", ")}`

const text = (value: string): AnswerPart => ({ type: "text", text: value })

const toolCallFor = (request: DemoRequest, message: string): AnswerPart | undefined => {
  const call = CALL.exec(message)
  if (call !== null) {
    const [, name, json] = call
    if (!request.tools.includes(name)) return text(`I cannot call ${name}: ${offered(request)}.`)
    let input: unknown = {}
    try {
      input = json === undefined ? {} : JSON.parse(json)
    } catch {
      return text(`I cannot call ${name}: its input is not valid JSON.`)
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return text(`I cannot call ${name}: its input must be a JSON object.`)
    }
    return { type: "tool_call", name, input: input as Record<string, unknown> }
  }
  const run = RUN.exec(message)
  if (run !== null) {
    const command = run[1].trim()
    if (!request.tools.includes("run_command")) return text(`I cannot run "${command}": ${offered(request)}.`)
    return { type: "tool_call", name: "run_command", input: { command } }
  }
  return undefined
}

export const demoAnswer = (request: DemoRequest): DemoAnswer => {
  const message = request.lastUserText
  const slow = /\bslowly\b/i.test(message)
  const reasoning: ReadonlyArray<AnswerPart> = /\bthink/i.test(message)
    ? [{ type: "reasoning", text: `The user wrote ${message.length} characters; I answer as the demo model does.` }]
    : []
  const result = request.endsWithToolResult
  if (result !== undefined) {
    return { output: [...reasoning, text(`${result.name} answered: ${quote(result.output)}`)], slow }
  }
  const action = toolCallFor(request, message)
  return { output: [...reasoning, action ?? text(`You said: ${quote(message)}`)], slow }
}
