/**
 * The node:http listener on HOST:PORT.
 *
 * - What Node answers itself (a request line or headers over its 16 KiB limit, malformed HTTP, a
 *   request not received in time, an `Expect` other than `100-continue`) gets our JSON error body
 *   instead of an empty one; a CONNECT, which Node hands over without answering, gets a `404`.
 * - An answer given before the request's body has fully arrived (a refused body, a 401) closes
 *   the connection, after a lingering close (see `linger`).
 * - At most `connectionLimit` connections at once, so clients never take the file descriptors
 *   the database needs.
 * - A connection with more than MAX_UNANSWERED_REQUESTS_PER_CONNECTION requests waiting for their
 *   answers (pipelined) is closed; a body is asked for (`100 Continue`) when the route starts reading it.
 * - Shutdown logs how many requests it drains, closes keep-alive connections as soon as they
 *   are idle, and after SHUTDOWN_GRACE_MS every connection left.
 * - A WebSocket frame larger than the machine socket's limit closes its connection (1009).
 */
import { HttpServer } from "effect/http"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { DAEMON_MESSAGE_MAX_BYTES } from "../../domain/machines/MessageSizes.ts"
import { beginShutdown } from "../../process/Logging.ts"
import { AppConfig } from "../AppConfig.ts"
import { awaitContinue } from "./ExpectContinue.ts"

/** How long shutdown waits for in-flight requests before closing their connections. */
const SHUTDOWN_GRACE_MS = 10_000

/** How long a connection keeps reading (and dropping) a refused body after the answer. */
const LINGER_MS = 2_000

/**
 * A lingering close, as nginx does it. After an answer with `Connection: close` to a request
 * whose body is still arriving, Node ends the connection and destroys it as soon as the answer
 * is written (socket.destroySoon); a client still sending its body then gets a reset, and many
 * clients lose the answer with it. Instead the rest of the body is read and dropped (never
 * kept), and the connection is destroyed when the client has sent everything or after
 * LINGER_MS, whichever comes first.
 *
 * Runs on the answer's `finish`, after Node's own handler of it (registered before the request
 * is emitted), which has ended the socket when the connection closes after this answer. That is
 * what is checked, not the answer's `Connection` header: headers given to `writeHead` (as
 * effect/http gives them) are not visible to `getHeader`.
 */
const linger = (request: IncomingMessage) => {
  const socket = request.socket
  if (request.complete || !socket.writableEnded) return
  socket.off("finish", socket.destroy)
  request.resume()
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  socket.once("close", () => clearTimeout(timer))
  socket.once("end", () => socket.destroy())
}

/**
 * An answer written on the socket itself, where Node gives the listener no response object: the
 * usual JSON error body, and the connection closed after it.
 */
const rawAnswer = (status: number, reason: string, code: string, message: string) => {
  const body = JSON.stringify({ error: message, code })
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    `connection: close\r\n\r\n${body}`
}

/** Status, reason phrase, code and message of each error Node's parser reports. */
const clientErrorResponse = (code: string | undefined) =>
  code === "HPE_HEADER_OVERFLOW"
    ? [431, "Request Header Fields Too Large", "request_too_large", "The request line and headers are larger than 16 KiB; send long data in a body"] as const
    : code === "ERR_HTTP_REQUEST_TIMEOUT"
    ? [408, "Request Timeout", "invalid_request", "The request did not arrive in time"] as const
    : [400, "Bad Request", "invalid_request", "The request is not valid HTTP/1.1"] as const

/**
 * Answers what Node's parser refused on a connection. When the connection's earlier requests are
 * still being answered (a client pipelined a malformed request after them), they are answered
 * first and the refusal sent after the last of them (`limitPipelining`'s count reaching 0): an
 * earlier request's answer had been lost with the connection, though the request was carried out.
 * When the request being read is itself cut (its body's framing broke), the connection is
 * closed: that request cannot be answered on framing that cannot be trusted.
 */
const answerClientError = (error: NodeJS.ErrnoException, socket: Duplex) => {
  const connection = socket as Connection
  const lastRequest = connection[LAST_REQUEST]
  if (error.code === "ECONNRESET" || !socket.writable || (lastRequest !== undefined && !lastRequest.complete)) {
    socket.destroy()
    return
  }
  const [status, reason, code, message] = clientErrorResponse(error.code)
  const refusal = rawAnswer(status, reason, code, message)
  if ((connection[UNANSWERED] ?? 0) === 0) {
    socket.end(refusal)
    return
  }
  // Nothing more is read from the connection: what follows the malformed request is not HTTP either.
  socket.pause()
  connection[DEFERRED_REFUSAL] ??= refusal
}

/** Answers a request whose `Expect` is not `100-continue` (Node's own answer is a 417 without a body). */
const answerUnmetExpectation = (_request: IncomingMessage, response: ServerResponse) => {
  const body = JSON.stringify({
    error: `Only 'Expect: 100-continue' is supported; send the request without this Expect header`,
    code: "invalid_request"
  })
  response.writeHead(417, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" })
  response.end(body)
}

/**
 * Answers a CONNECT request: `404 not_found` with the usual body, as any method no route takes
 * at a target (`No route DELETE /v1/orgs`); this server is no proxy, and the request is valid
 * HTTP, so not `400`. Node hands a CONNECT to a `connect` listener with its raw socket instead of
 * answering it (without a listener it destroyed the connection, with no answer). What follows
 * its head on the socket is the tunnel's, never HTTP, so the connection closes after the answer;
 * what still arrives is read and dropped until the client ends or LINGER_MS pass (as `linger`).
 */
const answerConnect = (request: IncomingMessage, socket: Duplex) => {
  socket.on("error", () => socket.destroy())
  socket.resume()
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  socket.once("close", () => clearTimeout(timer))
  socket.once("end", () => socket.destroy())
  socket.end(rawAnswer(404, "Not Found", "not_found", `No route CONNECT ${request.url ?? ""}; this server is not a proxy`))
}

/**
 * Requests of one connection that may wait for their answers at once; past it the connection is
 * closed (and the requests on it are interrupted). Node parses every request a client pipelines
 * as it arrives and stops reading only once answers back up, which answers that take a database
 * round trip had not: a client that wrote 200,000 requests in one go (24 MB, no valid key
 * needed) had them all taken at once, 4 GB, every tenant without an answer for a minute. A
 * client that pipelines waits for answers long before this many; this one is not a client. (The
 * bound applies to what Node has parsed: the chunk being parsed, 64 KiB, is parsed whole.)
 */
export const MAX_UNANSWERED_REQUESTS_PER_CONNECTION = 256

/** The requests of a connection waiting for their answers, kept on its socket. */
const UNANSWERED = Symbol("unanswered requests")
/** The last request Node parsed on a connection. */
const LAST_REQUEST = Symbol("last request")
/** The refusal of a malformed request, sent once the requests before it are answered (`answerClientError`). */
const DEFERRED_REFUSAL = Symbol("deferred refusal")

type Connection = Duplex & {
  [UNANSWERED]?: number
  [LAST_REQUEST]?: IncomingMessage
  [DEFERRED_REFUSAL]?: string
}

/**
 * Counts a request on its connection until its answer closes (the caller calls the function
 * returned then, from the listener it already has), and closes a connection past the bound.
 * After the last answer, a refusal waiting for it is sent and the connection closed.
 */
export const limitPipelining = (request: IncomingMessage): () => void => {
  const connection = request.socket as Socket & Connection
  const count = (connection[UNANSWERED] ?? 0) + 1
  connection[UNANSWERED] = count
  connection[LAST_REQUEST] = request
  if (count > MAX_UNANSWERED_REQUESTS_PER_CONNECTION) connection.destroy()
  return () => {
    const left = connection[UNANSWERED]! - 1
    connection[UNANSWERED] = left
    const refusal = connection[DEFERRED_REFUSAL]
    if (left === 0 && refusal !== undefined && connection.writable) connection.end(refusal)
  }
}

/**
 * The most connections the listener holds at once: the process's open-file limit less a reserve
 * (a quarter of it, at most 1,024) for the database's connections, the cluster runner's, and
 * files. Past it Node closes each new connection at once. Without it, 24,000 idle connections
 * (no key needed) took every file descriptor: the database pool could not connect (`EMFILE`), so
 * every tenant's requests failed and the server's background work with them.
 */
export const connectionLimit = (openFiles: number | undefined): number =>
  openFiles === undefined ? 4096 : openFiles - Math.min(1024, Math.floor(openFiles / 4))

/** The soft limit of open files of this process (Linux), or undefined where it cannot be read. */
export const readOpenFileLimit = (): number | undefined => {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"))
    return line === null || line[1] === "unlimited" ? undefined : Number(line[1])
  } catch {
    return undefined
  }
}

/**
 * The options of the WebSocket server that upgrades connections. The machine WebSocket is the only
 * route that upgrades, so its frame limit is the server's: a frame over it is refused at its
 * header with 1009 (MessageSizes.ts), where `ws` would take up to 100 MiB.
 */
const WEBSOCKET_OPTIONS = { maxPayload: DAEMON_MESSAGE_MAX_BYTES }

const makeServer = () => {
  let inFlight = 0
  // A request without Host is refused by the guards with a JSON body (Node's own answer has none).
  const server = createServer({ requireHostHeader: false })
  server.maxConnections = connectionLimit(readOpenFileLimit())
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    inFlight++
    const answered = limitPipelining(request)
    response.once("close", () => {
      inFlight--
      answered()
    })
    response.once("finish", () => linger(request))
  }
  server.on("request", onRequest)
  // Node emits these instead of `request` (effect/http handles them as requests too).
  server.on("checkContinue", (request: IncomingMessage, response: ServerResponse) => {
    awaitContinue(request, response)
    onRequest(request, response)
  })
  server.on("clientError", answerClientError)
  server.on("checkExpectation", answerUnmetExpectation)
  server.on("connect", answerConnect)
  const close = server.close.bind(server)
  server.close = ((callback?: (error?: Error) => void) => {
    const closeIdle = setInterval(() => server.closeIdleConnections(), 50)
    const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS)
    return close((error) => {
      clearInterval(closeIdle)
      clearTimeout(deadline)
      callback?.(error)
    })
  }) as typeof server.close
  return { server, inFlight: () => inFlight }
}

/** The same server on a random loopback port, with an HttpClient pointed at it (tests and benchmarks). */
export const NodeTestServerLive = HttpServer.layerTestClient.pipe(
  Layer.provide(NodeHttpClient.layerNodeHttpOptions({ keepAlive: false })),
  Layer.provideMerge(NodeHttpServer.layer(() => makeServer().server, { host: "127.0.0.1", port: 0, websocket: WEBSOCKET_OPTIONS }))
)

/**
 * `app` served on HOST:PORT. Shutdown begins with one line saying how many requests it drains,
 * before `app` closes (its listener stops accepting connections and drains them).
 */
export const NodeServerLive = <A, E, R>(app: Layer.Layer<A, E, R>) =>
  Layer.unwrap(
    Effect.map(AppConfig, (config) => {
      const { inFlight, server } = makeServer()
      const announceShutdown = Layer.effectDiscard(
        Effect.addFinalizer(() =>
          Effect.suspend(() => {
            beginShutdown()
            return Effect.logInfo(`shutting down: draining ${inFlight()} requests`)
          })
        )
      )
      return announceShutdown.pipe(
        Layer.provideMerge(app),
        Layer.provide(NodeHttpServer.layer(() => server, { host: config.host, port: config.port, websocket: WEBSOCKET_OPTIONS }))
      )
    })
  )
