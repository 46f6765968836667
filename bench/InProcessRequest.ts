/**
 * A request answered in process, without a connection: Node's own IncomingMessage and
 * ServerResponse over a socket that drops what is written, handed to the `request` listeners of
 * the server's node:http listener. What a request costs the server's JavaScript (routing, guards,
 * handlers, statements, the log line) is then measured without the TCP and HTTP parsing costs that
 * the same request pays on a connection, and without a load generator on the same cores.
 * (light-my-request does the same, but kept about 9 KiB a request alive in this process, and the
 * collector's growing work swamped what was measured.)
 */
import { IncomingMessage, type Server, ServerResponse } from "node:http"
import { Duplex } from "node:stream"

/** A connected socket as the listener sees it; what the response writes goes nowhere. */
class DiscardingSocket extends Duplex {
  readonly remoteAddress = "127.0.0.1"
  readonly remotePort = 40_000
  override _read() {}
  override _write(_chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void) {
    callback()
  }
  setTimeout() {
    return this
  }
  setNoDelay() {
    return this
  }
  setKeepAlive() {
    return this
  }
}

/** Sends one request to `server`'s `request` listeners; resolves with its status once the answer is finished. */
export const answerInProcess = (
  server: Server,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string
): Promise<number> =>
  new Promise((resolve, reject) => {
    const socket = new DiscardingSocket()
    const request = new IncomingMessage(socket as never)
    request.method = method
    request.url = path
    request.httpVersion = "1.1"
    request.httpVersionMajor = 1
    request.httpVersionMinor = 1
    request.headers = {
      host: "localhost",
      ...headers,
      ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) })
    }
    if (body !== undefined) request.push(body)
    request.push(null)
    request.complete = true
    const response = new ServerResponse(request)
    response.assignSocket(socket as never)
    response.once("finish", () => {
      // Not destroyed: the writes whose callbacks are still due would each make an error.
      response.detachSocket(socket as never)
      resolve(response.statusCode)
    })
    response.once("error", reject)
    for (const listener of server.listeners("request")) listener(request, response)
  })
