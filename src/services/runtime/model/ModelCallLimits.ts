/**
 * What one model call may take from its provider (docs/model-adapters.md, "Bounds"): the bytes it
 * reads, the size of the answer it keeps and its tool calls, the error body it reads and the error
 * message it keeps.
 * The timeouts are settings (AppConfig: AGENT_PLATFORM_MODEL_*_TIMEOUT_SECONDS).
 */

const KIB = 1024
const MIB = 1024 * KIB

/**
 * The bytes one model call reads from its provider's answer (a stream's events, a whole body).
 * A 128k-token answer streamed one token an event is 25 to 35 MiB of SSE (an openai-responses
 * delta event is about 230 bytes, a Chat Completions chunk 230 to 300): twice the largest answer
 * a model writes today. Past it the call stops reading, closes the connection and fails.
 */
export const MAX_MODEL_RESPONSE_BYTES = 64 * MIB

/**
 * The answer one model call keeps, folded: its text, reasoning, tool calls' names and inputs (as
 * JSON) and the vendor's replay data, in UTF-8 bytes, with what the adapter holds of items not
 * yet whole (a tool call's arguments as they come) and a little for each item (AnswerSize.ts). A
 * 128k-token answer is about 0.5 MiB of text; the answer is stored as one event and sent back on
 * every later call, so 8 MiB is sixteen times that and still a page of events a client can read. Past it the call stops reading, closes
 * the connection and fails.
 */
export const MAX_MODEL_ANSWER_BYTES = 8 * MIB

/**
 * The most tool calls one model answer may make. Providers' models emit a handful of parallel
 * calls, rarely some tens; an answer of thousands is a model gone wrong, each call a row, an event
 * and a dispatch of its turn, and part of every later request (docs/runtime.md, "Limits of a
 * turn"). Counted as the calls begin, not once the answer is whole: past it the call stops
 * reading, closes the connection and fails.
 */
export const MAX_TOOL_CALLS_PER_ANSWER = 256

/** The bytes of an error answer's body (a status other than 2xx) that are read; the rest is not. */
export const MAX_ERROR_BODY_BYTES = 64 * KIB

/** The characters of a provider's error message that a failure keeps; a longer one is cut, a marker saying so. */
export const MAX_ERROR_MESSAGE_CHARACTERS = 4 * KIB

/**
 * After the part of a body the call wants (a stream's final event, an error body's first bytes):
 * the rest is read and dropped for at most this long and AFTER_END_BYTES, so that a connection
 * whose body ends just after is kept open for the next call; one that goes on is closed.
 */
export const AFTER_END_MILLIS = 1000
export const AFTER_END_BYTES = 64 * KIB

/** `bytes` as "64 MiB", "8 MiB", "64 KiB" (whole units), else "N bytes". */
export const describeBytes = (bytes: number) =>
  bytes % MIB === 0 ? `${bytes / MIB} MiB` : bytes % KIB === 0 ? `${bytes / KIB} KiB` : `${bytes} bytes`

/** `millis` as "5 minutes", "1 second", "0.5 seconds". */
export const describeMillis = (millis: number) => {
  const seconds = millis / 1000
  if (seconds >= 60 && seconds % 60 === 0) return seconds === 60 ? "1 minute" : `${seconds / 60} minutes`
  return seconds === 1 ? "1 second" : `${seconds} seconds`
}

const MARKER = " [… cut: "

/**
 * `message` cut to MAX_ERROR_MESSAGE_CHARACTERS, a marker saying so (and `more`, when what was
 * read was itself cut); as it was when it fits, or when it was cut so already.
 */
export const cutMessage = (message: string, more?: string) => {
  if (more === undefined) {
    if (message.length <= MAX_ERROR_MESSAGE_CHARACTERS) return message
    if (message.length <= MAX_ERROR_MESSAGE_CHARACTERS + 256 && message.startsWith(MARKER, MAX_ERROR_MESSAGE_CHARACTERS)) return message
  }
  const left = message.length - MAX_ERROR_MESSAGE_CHARACTERS
  const kept = left > 0 ? message.slice(0, MAX_ERROR_MESSAGE_CHARACTERS) : message
  const note = [left > 0 ? `${left} more characters left out` : undefined, more].filter((part) => part !== undefined)
  return `${kept}${MARKER}${note.join("; ")}]`
}
