/**
 * The listener's bounds on connections. Requests a client pipelines on one connection: up to
 * MAX_UNANSWERED_REQUESTS_PER_CONNECTION may wait for their answers; past it the connection is
 * closed (a node:http server with the listener's own bound and requests held by the test). The
 * connections at once: the open-file limit less a reserve for the database and files.
 */
import { afterEach, describe, expect, it } from "vitest"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { type AddressInfo, connect, type Socket } from "node:net"
import {
  connectionLimit,
  limitPipelining,
  MAX_UNANSWERED_REQUESTS_PER_CONNECTION,
  readOpenFileLimit
} from "../../src/layers/http/NodeServer.ts"

const held: Array<ServerResponse> = []
const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  response.once("close", limitPipelining(request))
  held.push(response)
})

afterEach(() => {
  held.length = 0
  server.closeAllConnections()
  server.close()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until `done()`, at most `ms`. */
const until = async (done: () => boolean, ms: number) => {
  for (const started = Date.now(); !done() && Date.now() - started < ms;) await sleep(20)
}

/** A connection to the server that writes `count` pipelined requests at once and counts the answers. */
const pipeline = async (count: number) => {
  await new Promise<void>((resolve) => server.listening ? resolve() : server.listen(0, "127.0.0.1", resolve))
  const socket: Socket = connect((server.address() as AddressInfo).port, "127.0.0.1")
  const seen = { answers: 0, closed: false }
  socket.on("data", (chunk) => seen.answers += chunk.toString().split("HTTP/1.1 200").length - 1)
  socket.on("close", () => seen.closed = true)
  socket.on("error", () => undefined)
  socket.write(Array.from({ length: count }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join(""))
  return seen
}

describe("pipelined requests", () => {
  it("up to the bound wait for their answers, then are answered in order", async () => {
    const seen = await pipeline(MAX_UNANSWERED_REQUESTS_PER_CONNECTION)
    await until(() => held.length === MAX_UNANSWERED_REQUESTS_PER_CONNECTION, 2_000)
    expect(held).toHaveLength(MAX_UNANSWERED_REQUESTS_PER_CONNECTION)
    for (const response of held) response.end("ok")
    await until(() => seen.answers === MAX_UNANSWERED_REQUESTS_PER_CONNECTION, 2_000)
    expect(seen).toEqual({ answers: MAX_UNANSWERED_REQUESTS_PER_CONNECTION, closed: false })
  })

  it("past the bound close the connection", async () => {
    const seen = await pipeline(MAX_UNANSWERED_REQUESTS_PER_CONNECTION + 1)
    await until(() => seen.closed, 2_000)
    expect(seen.closed).toBe(true)
    expect(seen.answers).toBe(0)
  })
})

describe("connections at once", () => {
  it("are the open-file limit less a quarter of it, at most 1,024; 4,096 where the limit is not known", () => {
    expect(connectionLimit(20_000)).toBe(18_976)
    expect(connectionLimit(1_024)).toBe(768)
    expect(connectionLimit(undefined)).toBe(4_096)
    // This machine's limit is read (Linux).
    expect(readOpenFileLimit()).toBeGreaterThan(0)
  })
})
