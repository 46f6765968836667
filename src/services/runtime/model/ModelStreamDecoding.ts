/**
 * A streamed model response decoded in one stage of the stream (ModelClient): a model answers in
 * many small pieces, and a stream stage per step (text, Server-Sent Events, redaction, the
 * adapter's decoding) and per element cost more than the decoding itself.
 */
import { Sse } from "@effect/experimental"
import { Channel, Chunk, Either } from "effect"
import { type ModelEvent, ModelProviderError } from "./ModelMessages.ts"
import type { SseEvent, WireAdapter } from "./WireAdapter.ts"

/** Network chunks of a response in, its events out. */
export type ModelStreamDecoding = Channel.Channel<Chunk.Chunk<ModelEvent>, Chunk.Chunk<Uint8Array>, ModelProviderError, ModelProviderError>

const incompleteStream = () =>
  new ModelProviderError({ status: null, message: "The model provider closed the stream before the response was complete" })

type SseParser = ReturnType<typeof Sse.makeParser>

/**
 * Feeds `text` to the parser a line at a time, and says whether it failed. The parser of
 * @effect/experimental (0.61) scans its buffer from the start again for every line it finds, so
 * text of n lines fed at once costs n scans of the text: a network chunk holding a whole short
 * answer (2.5 KB, 30 lines) took 210 µs fed at once and 19 µs fed by lines, and a long answer
 * read in large chunks grows with the square of the chunk. Lines end at `\n` (`\r\n` included);
 * text with lines ended by a lone `\r` is fed as it comes, still correctly.
 */
const feedByLines = (parser: SseParser, text: string): boolean => {
  for (let start = 0; start < text.length;) {
    const newline = text.indexOf("\n", start)
    const end = newline === -1 ? text.length : newline + 1
    if (parser.feed(start === 0 && end === text.length ? text : text.slice(start, end)) !== undefined) return true
    start = end
  }
  return false
}

/**
 * The decoding of one streamed model response, one network chunk at a time: bytes to text, text to
 * Server-Sent Events (their data redacted), events to the adapter's ModelEvents. The events
 * decoded before a failure (an in-stream error event) are passed on before it; a stream that
 * ends before the adapter has seen its end fails.
 */
export const decodeModelStream = (
  adapterDecoder: ReturnType<WireAdapter["streamDecoder"]>,
  redact: (text: string) => string
): ModelStreamDecoding => {
  const text = new TextDecoder()
  const parsed: Array<SseEvent> = []
  // A `retry:` field is for browsers reconnecting an EventSource; a model call is not resumed.
  const parser = Sse.makeParser((event) => event._tag === "Event" && parsed.push({ event: event.event, data: event.data }))
  let complete = false

  const decode = (chunks: Chunk.Chunk<Uint8Array>): { events: Array<ModelEvent>; failure?: ModelProviderError } => {
    const events: Array<ModelEvent> = []
    for (const bytes of chunks) {
      if (feedByLines(parser, text.decode(bytes, { stream: true }))) {
        const message = "The model provider sent a stream event too large to read"
        return { events, failure: new ModelProviderError({ status: null, message }) }
      }
    }
    for (const sse of parsed.splice(0)) {
      const decoded = adapterDecoder({ event: sse.event, data: redact(sse.data) })
      if (Either.isLeft(decoded)) return { events, failure: decoded.left }
      for (const event of decoded.right) {
        events.push(event)
        if (event.type === "done") complete = true
      }
    }
    return { events }
  }

  const loop: ModelStreamDecoding =
    Channel.readWithCause({
      onInput: (chunks: Chunk.Chunk<Uint8Array>) => {
        const { events, failure } = decode(chunks)
        const written = events.length === 0 ? Channel.void : Channel.write(Chunk.unsafeFromArray(events))
        return Channel.zipRight(written, failure === undefined ? loop : Channel.fail(failure))
      },
      onFailure: Channel.failCause,
      onDone: () => complete ? Channel.void : Channel.fail(incompleteStream())
    })
  return loop
}
