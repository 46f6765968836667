/**
 * The HTTP exchanges of model calls, on Node's own client. @effect/platform's HttpClient cost
 * 0.9 to 2 ms of CPU an exchange here (its request and response wrappers, and a stream stage per
 * step of the body) against 0.15 to 0.3 ms for `node:http` doing the same: a model call is made
 * on every step of every turn (docs/performance.md, "Two statements fewer, and model calls on
 * Node's client").
 *
 * - Connections are kept open between calls (one agent for http, one for https, closed with the
 *   scope); with a `lookup`, every connection checks what its host resolves to (NetworkPolicy).
 * - A response's body is read as it arrives: `read` hands over every chunk received since the
 *   last read, waiting for one when none is there. More than HIGH_WATER_BYTES unread pauses the
 *   socket until the next read.
 * - The exchange lives in its Scope: closing the scope before the body's end (an interruption, a
 *   failure while decoding) destroys the request, so the provider sees the client hang up.
 */
import { Data, Effect, Option, type Scope } from "effect"
import type { LookupFunction } from "node:net"
import http from "node:http"
import https from "node:https"

const HIGH_WATER_BYTES = 1024 * 1024

/** The request could not be sent, its answer's head did not arrive (refused, reset, DNS), or its body broke off. */
export class ExchangeFailed extends Data.TaggedError("ExchangeFailed")<{ readonly message: string }> {}

export interface ProviderResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The body's chunks received since the last read (waiting for one); none once the body has ended. */
  readonly read: Effect.Effect<Option.Option<ReadonlyArray<Buffer>>, ExchangeFailed>
  /** The rest of the body as text. */
  readonly text: Effect.Effect<string, ExchangeFailed>
}

const headersOf = (message: http.IncomingMessage): Record<string, string | undefined> => {
  const headers: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(message.headers)) headers[name] = Array.isArray(value) ? value.join(", ") : value
  return headers
}

/** The body of a response, buffered between reads. */
class BodyReader {
  private chunks: Array<Buffer> = []
  private buffered = 0
  private ended = false
  private failure: ExchangeFailed | undefined
  /** The read waiting for the body to move on, if one waits. */
  private waiter: ((taken: Effect.Effect<Option.Option<ReadonlyArray<Buffer>>, ExchangeFailed>) => void) | undefined

  constructor(private readonly message: http.IncomingMessage) {
    message.on("data", (chunk: Buffer) => {
      this.chunks.push(chunk)
      this.buffered += chunk.length
      if (this.buffered > HIGH_WATER_BYTES) message.pause()
      this.wake()
    })
    message.on("end", () => {
      this.ended = true
      this.wake()
    })
    message.on("error", (error) => this.fail(error.message))
    message.on("close", () => {
      if (!this.ended) this.fail("the connection closed before the response was complete")
    })
  }

  get complete() {
    return this.ended
  }

  private fail(message: string) {
    this.failure ??= new ExchangeFailed({ message })
    this.wake()
  }

  private wake() {
    const waiter = this.waiter
    if (waiter === undefined) return
    const taken = this.take()
    if (taken === undefined) return
    this.waiter = undefined
    waiter(taken)
  }

  private take(): Effect.Effect<Option.Option<ReadonlyArray<Buffer>>, ExchangeFailed> | undefined {
    if (this.chunks.length > 0) {
      const chunks = this.chunks
      this.chunks = []
      this.buffered = 0
      if (this.message.isPaused()) this.message.resume()
      return Effect.succeed(Option.some(chunks))
    }
    if (this.failure !== undefined) return Effect.fail(this.failure)
    if (this.ended) return Effect.succeed(Option.none())
    return undefined
  }

  readonly read: Effect.Effect<Option.Option<ReadonlyArray<Buffer>>, ExchangeFailed> = Effect.suspend(() =>
    this.take() ?? Effect.async<Option.Option<ReadonlyArray<Buffer>>, ExchangeFailed>((resume) => {
      this.waiter = resume
      return Effect.sync(() => {
        this.waiter = undefined
      })
    })
  )

  readonly text: Effect.Effect<string, ExchangeFailed> = Effect.suspend(() => {
    const parts: Array<Buffer> = []
    const loop: Effect.Effect<string, ExchangeFailed> = Effect.flatMap(this.read, Option.match({
      onNone: () => Effect.succeed(Buffer.concat(parts).toString("utf8")),
      onSome: (chunks) => {
        parts.push(...chunks)
        return loop
      }
    }))
    return loop
  })
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

/** Posts JSON to model providers, for the life of the scope; `lookup` resolves the hosts of new connections. */
export const makeProviderHttp = (lookup: LookupFunction | undefined) => Effect.map(keepAliveAgents(lookup), (agents) => {

  /** Posts the JSON text `json` to `url`: the response once its head has arrived, for the life of the scope. */
  const postJson = (
    url: string,
    headers: Readonly<Record<string, string>>,
    json: string
  ): Effect.Effect<ProviderResponse, ExchangeFailed, Scope.Scope> =>
    Effect.gen(function*() {
      const payload = Buffer.from(json, "utf8")
      const target = yield* Effect.try({
        try: () => new URL(url),
        catch: () => new ExchangeFailed({ message: `${url} is not a URL` })
      })
      const secure = target.protocol === "https:"
      let request: http.ClientRequest | undefined
      let reader: BodyReader | undefined
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (request !== undefined && !(reader?.complete ?? false)) request.destroy()
        })
      )
      const message = yield* Effect.async<http.IncomingMessage, ExchangeFailed>((resume) => {
        let answered = false
        const sent = (secure ? https : http).request(target, {
          method: "POST",
          agent: secure ? agents.https : agents.http,
          headers: { ...headers, "content-type": "application/json", "content-length": payload.length }
        })
        request = sent
        sent.once("response", (response) => {
          answered = true
          resume(Effect.succeed(response))
        })
        // Kept for the request's life: a socket error after the head arrived reaches the body's reader too.
        sent.on("error", (error) => {
          if (answered) return
          answered = true
          resume(Effect.fail(new ExchangeFailed({ message: error.message })))
        })
        sent.end(payload)
        return Effect.sync(() => sent.destroy())
      })
      const received = new BodyReader(message)
      reader = received
      const response: ProviderResponse = {
        status: message.statusCode ?? 0,
        headers: headersOf(message),
        read: received.read,
        text: received.text
      }
      return response
    })

  return { postJson } as const
})
