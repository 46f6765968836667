/** Raw HTTP against the test server, for what neither the typed client nor `rawRequest` can do. */
import { HttpClient, HttpClientRequest, HttpServer } from "effect/http"
import { NetAddress } from "effect/net"
import { Effect } from "effect"
import { request as httpRequest } from "node:http"
import { connect } from "node:net"

/**
 * POSTs the headers of a JSON body of `length` bytes and only its first byte: a server that
 * refuses the body from its Content-Length answers before the rest would be sent.
 */
export const declareBody = (path: string, token: string, length: number) =>
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const port = (server.address as NetAddress.InetAddress).port
    return yield* Effect.callback<{ status: number; json: Record<string, unknown> }>((resume) => {
      const request = httpRequest({
        host: "127.0.0.1",
        port,
        method: "POST",
        path,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": String(length) }
      }, (response) => {
        let body = ""
        response.on("data", (chunk) => body += chunk)
        response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, json: JSON.parse(body) })))
      })
      request.on("error", () => undefined)
      request.write("{")
      return Effect.sync(() => request.destroy())
    })
  })

/** GETs `path` and returns the status, headers and body bytes. */
export const getBytes = (path: string, token: string) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    client.execute(HttpClientRequest.get(path).pipe(HttpClientRequest.bearerToken(token)))).pipe(
      Effect.flatMap((response) =>
        Effect.map(response.arrayBuffer, (body) => ({
          status: response.status,
          headers: response.headers,
          bytes: Buffer.from(body)
        }))
      ),
      Effect.scoped,
      Effect.orDie
    )

export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  readonly json: Record<string, any> | undefined
  /** Request body bytes written before the response had fully arrived. */
  readonly bodyBytesSent: number
  /** With `sendAfterAnswer`: the connection was reset after the response arrived. */
  readonly resetAfterAnswer: boolean
}

/** The response in `bytes` once it has fully arrived (by its content-length), else undefined. */
const parseResponse = (bytes: Buffer): Omit<RawResponse, "bodyBytesSent" | "resetAfterAnswer"> | undefined => {
  const end = bytes.indexOf("\r\n\r\n")
  if (end < 0) return undefined
  const [statusLine, ...lines] = bytes.subarray(0, end).toString("latin1").split("\r\n")
  const headers = Object.fromEntries(lines.map((line) => {
    const colon = line.indexOf(":")
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]
  }))
  const length = Number(headers["content-length"] ?? 0)
  if (bytes.length < end + 4 + length) return undefined
  const text = bytes.subarray(end + 4, end + 4 + length).toString("utf8")
  return {
    status: Number(statusLine.split(" ")[1]),
    headers,
    text,
    json: (headers["content-type"] ?? "").includes("json") ? JSON.parse(text) : undefined
  }
}

/**
 * A raw HTTP/1.1 exchange with the test server over its own TCP connection: writes `head` (the
 * request line and headers, without the blank line), then the body: each element of `body` in
 * turn, or, for a function, what it returns until it returns undefined (backpressure respected).
 * Stops sending as soon as the response has fully arrived, and resolves with it; a server that
 * answers before reading the whole body is seen answering early (`bodyBytesSent`).
 *
 * `sendAfterAnswer`: once the response has arrived, go on sending that many more body bytes (as
 * a client that has not looked at the response yet would), end the request's side and wait for
 * the server to close; `resetAfterAnswer` says whether the connection was reset meanwhile.
 */
export const exchange = (
  head: string,
  body: ReadonlyArray<string | Buffer> | (() => Buffer | undefined) = [],
  options: { readonly sendAfterAnswer?: number } = {}
) =>
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const port = (server.address as NetAddress.InetAddress).port
    return yield* Effect.callback<RawResponse, Error>((resume) => {
      const socket = connect(port, "127.0.0.1")
      let received = Buffer.alloc(0)
      let sent = 0
      let answer: RawResponse | undefined
      let reset = false
      const next = Array.isArray(body)
        ? (() => {
          let index = 0
          return () => index < body.length ? Buffer.from(body[index++]) : undefined
        })()
        : body as () => Buffer | undefined
      const pump = () => {
        while (answer === undefined && !socket.destroyed) {
          const chunk = next()
          if (chunk === undefined) return
          sent += chunk.length
          if (!socket.write(chunk)) return void socket.once("drain", pump)
        }
      }
      const sendTheRest = (left: number) => {
        while (left > 0 && !socket.destroyed) {
          const size = Math.min(left, 65536)
          left -= size
          if (!socket.write(Buffer.alloc(size, 0x20))) return void socket.once("drain", () => sendTheRest(left))
        }
        socket.end()
      }
      socket.on("data", (chunk) => {
        if (answer !== undefined) return
        received = Buffer.concat([received, chunk])
        const response = parseResponse(received)
        if (response === undefined) return
        answer = { ...response, bodyBytesSent: sent, resetAfterAnswer: false }
        if (options.sendAfterAnswer === undefined) {
          socket.destroy()
          resume(Effect.succeed(answer))
        } else {
          sendTheRest(options.sendAfterAnswer)
        }
      })
      // A server that stops reading a body may reset the connection once it has answered.
      socket.on("error", () => {
        if (answer !== undefined) reset = true
      })
      socket.on("close", () => {
        if (answer === undefined) resume(Effect.fail(new Error(`the connection closed without a whole response: ${received}`)))
        else if (options.sendAfterAnswer !== undefined) resume(Effect.succeed({ ...answer, resetAfterAnswer: reset }))
      })
      socket.write(head.replace(/\r?\n/g, "\r\n").trimEnd() + "\r\n\r\n")
      pump()
      return Effect.sync(() => socket.destroy())
    })
  })
