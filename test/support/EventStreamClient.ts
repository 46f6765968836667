/**
 * A raw Server-Sent Events client over node:http for tests: opens the agent's event stream (on
 * the in-process test server, or on a server process at a port), parses frames as they arrive,
 * can stop reading for a while, and can be dropped like a lost connection.
 */
import { HttpServer } from "effect/http"
import { NetAddress } from "effect/net"
import { Effect } from "effect"
import { type ClientRequest, type IncomingMessage, request as httpRequest } from "node:http"
import { provideLive } from "./Polling.ts"

export interface ServerSentEvent {
  readonly id: string | undefined
  readonly event: string | undefined
  readonly data: string | undefined
  /** The comment, for a frame that is only a comment (`: heartbeat`). */
  readonly comment: string | undefined
  /** When the frame arrived (Date.now()). */
  readonly receivedAt: number
}

export interface OpenStream {
  readonly status: number
  readonly headers: IncomingMessage["headers"]
  /** Waits (up to `timeoutMs`) until `count` frames carrying an event arrived; returns those events. */
  readonly events: (count: number, timeoutMs?: number) => Effect.Effect<ReadonlyArray<ServerSentEvent>>
  /** Every frame so far, comments included. */
  readonly frames: () => ReadonlyArray<ServerSentEvent>
  /** Waits (up to `timeoutMs`) until the server ended the response; when it did (Date.now()), if it did. */
  readonly ended: (timeoutMs?: number) => Effect.Effect<number | undefined>
  /** Drops the connection. */
  readonly drop: Effect.Effect<void>
  /** Stops reading the response (as a client that does not keep up), until `resume`. */
  readonly pause: Effect.Effect<void>
  readonly resume: Effect.Effect<void>
}

const parseFrame = (frame: string): ServerSentEvent => {
  const fields: Record<string, string> = {}
  let comment: string | undefined
  for (const line of frame.split("\n")) {
    if (line.startsWith(":")) comment = line.slice(1).trim()
    else {
      const colon = line.indexOf(":")
      fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, "")
    }
  }
  return { id: fields.id, event: fields.event, data: fields.data, comment, receivedAt: Date.now() }
}

/**
 * Opens `path` on the test server with `token` (none: no Authorization header, as a browser's
 * EventSource sends) and extra headers (such as `last-event-id`).
 */
export const openEventStream = (path: string, token: string | undefined, headers: Record<string, string> = {}) =>
  Effect.flatMap(HttpServer.HttpServer, (server) =>
    openEventStreamAt((server.address as NetAddress.InetAddress).port, path, token, headers))

/** Opens `path` on the server listening on 127.0.0.1:`port`. */
export const openEventStreamAt = (port: number, path: string, token: string | undefined, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const frames: Array<ServerSentEvent> = []
    let buffer = ""
    let request: ClientRequest | undefined
    const response = yield* Effect.callback<IncomingMessage, Error>((resume) => {
      request = httpRequest({
        host: "127.0.0.1",
        port,
        path,
        headers: {
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          accept: "text/event-stream",
          ...headers
        }
      }, (response) => resume(Effect.succeed(response)))
      request.on("error", (error) => resume(Effect.fail(error)))
      request.end()
    }).pipe(Effect.orDie)
    response.setEncoding("utf8")
    response.on("data", (chunk: string) => {
      buffer += chunk
      let end = buffer.indexOf("\n\n")
      while (end >= 0) {
        frames.push(parseFrame(buffer.slice(0, end)))
        buffer = buffer.slice(end + 2)
        end = buffer.indexOf("\n\n")
      }
    })
    let endedAt: number | undefined
    response.on("end", () => {
      endedAt = Date.now()
    })
    response.on("error", () => undefined)
    const eventFrames = () => frames.filter((frame) => frame.id !== undefined)
    const stream: OpenStream = {
      status: response.statusCode ?? 0,
      headers: response.headers,
      frames: () => [...frames],
      events: (count, timeoutMs = 5_000) =>
        Effect.gen(function*() {
          const deadline = Date.now() + timeoutMs
          while (eventFrames().length < count && Date.now() < deadline) yield* Effect.sleep("10 millis")
          return eventFrames()
        }).pipe(provideLive),
      ended: (timeoutMs = 5_000) =>
        Effect.gen(function*() {
          const deadline = Date.now() + timeoutMs
          while (endedAt === undefined && Date.now() < deadline) yield* Effect.sleep("10 millis")
          return endedAt
        }).pipe(provideLive),
      drop: Effect.sync(() => request?.destroy()),
      pause: Effect.sync(() => response.pause()),
      resume: Effect.sync(() => response.resume())
    }
    return stream
  })
