/**
 * A streamed model response decoded as its bytes arrive (ModelClient): bytes to text, text to
 * Server-Sent Events (their data redacted), events to the adapter's ModelEvents, in plain code
 * over each network chunk: a model answers in many small pieces, and an effect or a stream stage
 * per piece would cost more than the decoding itself.
 *
 * The bytes read are counted: past MAX_MODEL_RESPONSE_BYTES the response fails. The adapter's
 * final event (`done`) completes it: what follows is not decoded, and the reader stops.
 */
import { Sse } from "effect/encoding"
import { Result } from "effect"
import { MAX_MODEL_RESPONSE_BYTES } from "./ModelCallLimits.ts"
import { type ModelEvent, ModelProviderError } from "./ModelMessages.ts"
import type { SseEvent, WireAdapter } from "./WireAdapter.ts"

/**
 * The events of the chunks decoded so far, and the failure that ended the response, if any;
 * `complete` once the adapter's final event came (the events end with it).
 */
export interface Decoded {
  readonly events: ReadonlyArray<ModelEvent>
  readonly failure?: ModelProviderError
  readonly complete?: boolean
}

export interface ModelStreamDecoder {
  /** The events of the next network chunks; the events decoded before a failure come with it. */
  readonly decode: (chunks: ReadonlyArray<Uint8Array>) => Decoded
  /** The failure of a response that ended before the adapter saw its end, if it did. */
  readonly end: () => ModelProviderError | undefined
}

/**
 * The decoder of one streamed model response; `tooLarge` is its failure past
 * MAX_MODEL_RESPONSE_BYTES.
 */
export const makeModelStreamDecoder = (
  adapterDecoder: ReturnType<WireAdapter["streamDecoder"]>,
  redact: (text: string) => string,
  tooLarge: () => ModelProviderError
): ModelStreamDecoder => {
  const text = new TextDecoder()
  const parsed: Array<SseEvent> = []
  // A `retry:` field is for browsers reconnecting an EventSource; a model call is not resumed.
  const parser = Sse.makeParser((event) => event._tag === "Event" && parsed.push({ event: event.event, data: event.data }))
  let complete = false
  let received = 0

  const decode = (chunks: ReadonlyArray<Uint8Array>): Decoded => {
    const events: Array<ModelEvent> = []
    for (const bytes of chunks) {
      received += bytes.length
      if (received > MAX_MODEL_RESPONSE_BYTES) return { events, failure: tooLarge() }
      if (parser.feed(text.decode(bytes, { stream: true })) !== undefined) {
        const message = "The model provider sent a stream event too large to read"
        return { events, failure: new ModelProviderError({ status: null, message }) }
      }
    }
    const count = parsed.length
    for (let index = 0; index < count; index++) {
      const sse = parsed[index]
      const decoded = adapterDecoder({ event: sse.event, data: redact(sse.data) })
      if (Result.isFailure(decoded)) {
        parsed.length = 0
        return { events, failure: decoded.failure }
      }
      for (const event of decoded.success) {
        events.push(event)
        if (event.type === "done") complete = true
      }
      // The final event: what follows it (another answer, an error) is not the answer's.
      if (complete) break
    }
    parsed.length = 0
    return complete ? { events, complete } : { events }
  }

  const end = () =>
    complete
      ? undefined
      : new ModelProviderError({ status: null, message: "The model provider closed the stream before the response was complete" })

  return { decode, end }
}
