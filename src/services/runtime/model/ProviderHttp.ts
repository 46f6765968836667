/**
 * The HTTP exchanges of model calls, on Node's own client. Effect 3's HttpClient (@effect/platform) cost
 * 0.9 to 2 ms of CPU an exchange here (its request and response wrappers, and a stream stage per
 * step of the body) against 0.15 to 0.3 ms for `node:http` doing the same: a model call is made
 * on every step of every turn (docs/performance-record.md, "Two statements fewer, and model calls on
 * Node's client").
 *
 * - Connections are kept open between calls (one agent for http, one for https, closed with the
 *   scope); with a `lookup`, every connection checks what its host resolves to (NetworkPolicy).
 * - A response's body is read as it arrives: `forEachRead` hands the chunks of each read of the
 *   network to plain code, with no effect per read (a model streams in many small reads, and a
 *   fiber suspended and resumed per read cost about as much as the read's decoding:
 *   docs/performance-record.md, "Streamed answers read in plain code"). Chunks that arrive before the
 *   reading starts are kept; more than HIGH_WATER_BYTES of them pause the socket until it starts.
 * - The exchange lives in its Scope: closing the scope before the body's end (an interruption, a
 *   failure while decoding) destroys the request, so the provider sees the client hang up.
 * - Time is bounded (docs/model-adapters.md, "Bounds"): an answer's head that does not come within
 *   `timeouts.head`, or a body that sends nothing for `timeouts.idle`, closes the connection and
 *   fails with `timeout` set. A reader that stops before the body's end (it has what it wants)
 *   leaves the rest to be read and dropped for at most AFTER_END_MILLIS and AFTER_END_BYTES, so a
 *   body that ends just after keeps its connection for the next call; one that goes on is closed.
 */
import { Data, Effect, type Scope } from "effect"
import type { LookupFunction } from "node:net"
import http from "node:http"
import https from "node:https"
import { AFTER_END_BYTES, AFTER_END_MILLIS } from "./ModelCallLimits.ts"

const HIGH_WATER_BYTES = 1024 * 1024

/**
 * The request could not be sent, its answer's head did not arrive (refused, reset, DNS), or its
 * body broke off; `timeout` says which wait ran out, when one did.
 */
export class ExchangeFailed extends Data.TaggedError("ExchangeFailed")<{
  readonly message: string
  readonly timeout?: "head" | "idle"
}> {}

/** How long an exchange waits for its answer's head, and for each next piece of its body. */
export interface ExchangeTimeouts {
  readonly headMillis: number
  readonly idleMillis: number
}

/** What a reader returns to stop reading: it has what it wants of the body. */
export const STOP_READING = Symbol("STOP_READING")

export interface ProviderResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  /**
   * Reads the body to its end, handing `onRead` the chunks of each read of the network as they
   * arrive, in plain code (no effect per read). A failure `onRead` returns stops the reading and
   * fails with it, STOP_READING stops it; an exception it throws is a defect.
   */
  readonly forEachRead: <E>(
    onRead: (chunks: ReadonlyArray<Buffer>) => E | typeof STOP_READING | undefined
  ) => Effect.Effect<void, ExchangeFailed | E>
  /** The rest of the body as text, its first `maxBytes` bytes at most (`cut` when there were more). */
  readonly text: (maxBytes: number) => Effect.Effect<{ readonly text: string; readonly cut: boolean }, ExchangeFailed>
  /** Done with the exchange: a body not read to its end is left (AFTER_END_MILLIS, AFTER_END_BYTES) or closed. */
  readonly close: Effect.Effect<void>
}

const headersOf = (message: http.IncomingMessage): Record<string, string | undefined> => {
  const headers: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(message.headers)) headers[name] = Array.isArray(value) ? value.join(", ") : value
  return headers
}

/**
 * The body of a response. Node emits a chunk per piece of the HTTP framing, several for one read
 * of the socket; they are handed to the reader together, in a microtask after the read. Chunks
 * that arrive before a reader starts are kept (the socket paused beyond HIGH_WATER_BYTES). A body
 * that sends nothing for `idleMillis` is closed and fails.
 */
class BodyReader {
  /** Chunks received and not yet handed to the reader. */
  private received: Array<Buffer> = []
  private receivedBytes = 0
  /** A microtask to hand the received chunks over is queued. */
  private handing = false
  private ended = false
  /** A reader stopped before the body's end: it had what it wanted. */
  private stopped = false
  private released = false
  /** When the last chunk arrived (Date.now()): the idle timer, when it fires, waits on from there. */
  private lastData = Date.now()
  private timer: ReturnType<typeof setTimeout> | undefined
  /** How the body ended (its end, or why it broke off), once it has. */
  private outcome: Effect.Effect<void, ExchangeFailed> | undefined
  /** The reader's handling of the chunks of a read and of the body's end, while one reads. */
  private reader:
    | {
      readonly read: (chunks: ReadonlyArray<Buffer>) => void
      readonly end: (outcome: Effect.Effect<void, ExchangeFailed>) => void
    }
    | undefined

  private readonly message: http.IncomingMessage
  private readonly request: http.ClientRequest
  private readonly idleMillis: number

  constructor(message: http.IncomingMessage, request: http.ClientRequest, idleMillis: number) {
    this.message = message
    this.request = request
    this.idleMillis = idleMillis
    this.timer = setTimeout(this.checkIdle, idleMillis).unref()
    message.on("data", (chunk: Buffer) => {
      this.lastData = Date.now()
      this.received.push(chunk)
      this.receivedBytes += chunk.length
      if (this.reader === undefined) {
        if (this.receivedBytes > HIGH_WATER_BYTES) message.pause()
      } else if (!this.handing) {
        this.handing = true
        queueMicrotask(this.handOver)
      }
    })
    message.on("end", () => {
      this.ended = true
      this.settle(Effect.void)
    })
    message.on("error", (error) => this.settle(Effect.fail(new ExchangeFailed({ message: error.message }))))
    message.on("close", () =>
      this.settle(Effect.fail(new ExchangeFailed({ message: "the connection closed before the response was complete" }))))
  }

  /** The body sent nothing for `idleMillis`: it fails, its connection closed. */
  private readonly checkIdle = () => {
    this.timer = undefined
    if (this.outcome !== undefined) return
    const quiet = Date.now() - this.lastData
    if (quiet < this.idleMillis) {
      this.timer = setTimeout(this.checkIdle, this.idleMillis - quiet).unref()
      return
    }
    this.settle(Effect.fail(new ExchangeFailed({ message: "the body of the answer stalled", timeout: "idle" })))
    this.request.destroy()
  }

  private clearTimer() {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private settle(outcome: Effect.Effect<void, ExchangeFailed>) {
    if (this.outcome !== undefined) return
    this.outcome = outcome
    this.clearTimer()
    // Chunks waiting to be handed over go first; the hand-over ends the reading after them.
    if (!this.handing) this.reader?.end(outcome)
  }

  /** Hands the received chunks to the reader, then the body's end if it came. */
  private readonly handOver = () => {
    this.handing = false
    const reader = this.reader
    if (reader === undefined) return
    if (this.received.length > 0) {
      const chunks = this.received
      this.received = []
      this.receivedBytes = 0
      reader.read(chunks)
    }
    if (this.outcome !== undefined) this.reader?.end(this.outcome)
  }

  readonly forEachRead = <E>(
    onRead: (chunks: ReadonlyArray<Buffer>) => E | typeof STOP_READING | undefined
  ): Effect.Effect<void, ExchangeFailed | E> =>
    Effect.callback<void, ExchangeFailed | E>((resume) => {
      let done = false
      const finish = (outcome: Effect.Effect<void, ExchangeFailed | E>) => {
        if (done) return
        done = true
        this.reader = undefined
        resume(outcome)
      }
      const read = (chunks: ReadonlyArray<Buffer>) => {
        let failure: E | typeof STOP_READING | undefined
        try {
          failure = onRead(chunks)
        } catch (defect) {
          return finish(Effect.die(defect))
        }
        if (failure === STOP_READING) {
          this.stopped = true
          finish(Effect.void)
        } else if (failure !== undefined) finish(Effect.fail(failure))
      }
      this.reader = { read, end: finish }
      // What arrived before the reading started (all of the body, perhaps).
      this.handOver()
      if (!done && this.message.isPaused()) this.message.resume()
      return Effect.sync(() => {
        done = true
        this.reader = undefined
      })
    })

  readonly text = (maxBytes: number): Effect.Effect<{ readonly text: string; readonly cut: boolean }, ExchangeFailed> =>
    Effect.suspend(() => {
      const parts: Array<Buffer> = []
      let bytes = 0
      let cut = false
      const keep = (chunks: ReadonlyArray<Buffer>) => {
        for (const chunk of chunks) {
          if (bytes + chunk.length > maxBytes) {
            parts.push(chunk.subarray(0, maxBytes - bytes))
            cut = true
            return STOP_READING
          }
          parts.push(chunk)
          bytes += chunk.length
        }
        return undefined
      }
      return Effect.map(this.forEachRead<never>(keep), () => ({ text: Buffer.concat(parts).toString("utf8"), cut }))
    })

  /**
   * Done with the exchange. A body read to its end leaves its connection to the agent; one whose
   * reader stopped early (it had what it wanted) is read on and dropped for AFTER_END_MILLIS and
   * AFTER_END_BYTES at most, then closed; any other (interrupted, failed) is closed now.
   */
  readonly release = () => {
    if (this.released) return
    this.released = true
    this.clearTimer()
    if (this.ended) return
    if (!this.stopped || this.outcome !== undefined) {
      this.request.destroy()
      return
    }
    let dropped = this.receivedBytes
    this.received = []
    this.receivedBytes = 0
    const timer = setTimeout(() => this.request.destroy(), AFTER_END_MILLIS).unref()
    const drop = (chunks: ReadonlyArray<Buffer>) => {
      for (const chunk of chunks) dropped += chunk.length
      if (dropped > AFTER_END_BYTES) {
        clearTimeout(timer)
        this.request.destroy()
      }
    }
    this.reader = {
      read: drop,
      end: () => {
        clearTimeout(timer)
        this.reader = undefined
      }
    }
    if (dropped > AFTER_END_BYTES) this.request.destroy()
    else if (this.message.isPaused()) this.message.resume()
  }
}

/** The open connections to model providers, closed with the scope. */
const keepAliveAgents = (lookup: LookupFunction | undefined) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const options = lookup === undefined ? { keepAlive: true } : { keepAlive: true, lookup }
      return { http: new http.Agent(options), https: new https.Agent(options) }
    }),
    (agents) =>
      Effect.sync(() => {
        agents.http.destroy()
        agents.https.destroy()
      })
  )

const byteLength = (chunks: ReadonlyArray<Uint8Array>) => chunks.reduce((length, chunk) => length + chunk.length, 0)

/**
 * Posts JSON to model providers, for the life of the scope; `lookup` resolves the hosts of new
 * connections; `timeouts` bound the wait for an answer's head and each pause of its body.
 */
export const makeProviderHttp = (lookup: LookupFunction | undefined, timeouts: ExchangeTimeouts) =>
  Effect.map(keepAliveAgents(lookup), (agents) => {

  /** Posts `json` (UTF-8, in chunks) to `url`: the response once its head has arrived, for the life of the scope. */
  const postJson = (
    url: string,
    headers: Readonly<Record<string, string>>,
    json: ReadonlyArray<Uint8Array>
  ): Effect.Effect<ProviderResponse, ExchangeFailed, Scope.Scope> =>
    Effect.gen(function*() {
      const target = yield* Effect.try({
        try: () => new URL(url),
        catch: () => new ExchangeFailed({ message: `${url} is not a URL` })
      })
      const secure = target.protocol === "https:"
      let request: http.ClientRequest | undefined
      let reader: BodyReader | undefined
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (reader !== undefined) reader.release()
          else request?.destroy()
        })
      )
      const message = yield* Effect.callback<http.IncomingMessage, ExchangeFailed>((resume) => {
        let answered = false
        const sent = (secure ? https : http).request(target, {
          method: "POST",
          agent: secure ? agents.https : agents.http,
          headers: { ...headers, "content-type": "application/json", "content-length": byteLength(json) }
        })
        request = sent
        const timer = setTimeout(() => {
          if (answered) return
          answered = true
          sent.destroy()
          resume(Effect.fail(new ExchangeFailed({ message: "no answer came", timeout: "head" })))
        }, timeouts.headMillis).unref()
        sent.once("response", (response) => {
          clearTimeout(timer)
          if (answered) return
          answered = true
          resume(Effect.succeed(response))
        })
        // Kept for the request's life: a socket error after the head arrived reaches the body's reader too.
        sent.on("error", (error) => {
          clearTimeout(timer)
          if (answered) return
          answered = true
          resume(Effect.fail(new ExchangeFailed({ message: error.message })))
        })
        // Corked, the chunks leave in one write with the head.
        sent.cork()
        for (const chunk of json) sent.write(chunk)
        sent.end()
        return Effect.sync(() => {
          clearTimeout(timer)
          sent.destroy()
        })
      })
      const received = new BodyReader(message, request!, timeouts.idleMillis)
      reader = received
      const response: ProviderResponse = {
        status: message.statusCode ?? 0,
        headers: headersOf(message),
        forEachRead: received.forEachRead,
        text: received.text,
        close: Effect.sync(received.release)
      }
      return response
    })

  return { postJson } as const
  })
