/**
 * A stand-in for the server's machine side, for the tests that need what the real server never
 * does at a chosen moment (drop a daemon's socket mid-stream, send a cancel for a request whose
 * result it has): `POST /api/v1/machines/register` answers every daemon as the machine MACHINE_ID,
 * and every machine WebSocket is welcomed after its hello. The test sends the rest by hand.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import WebSocket, { WebSocketServer } from "ws"
import { PROTOCOL_VERSION } from "../../src/domain/machines/DaemonProtocol.ts"

export const FAKE_MACHINE_ID = `mch_${"a".repeat(26)}`

export interface FakeConnection {
  readonly socket: WebSocket
  /** Every frame the daemon sent on this connection, parsed, in order. */
  readonly frames: Array<Record<string, any>>
  readonly send: (message: Record<string, unknown>) => void
  /** The request ids of the `result` frames from `from` (an index into `frames`) on. */
  readonly resultIds: (from?: number) => Array<string>
}

/** Listens on a port of its own (the system's choice), on 127.0.0.1. */
export const startFakeMachineServer = async () => {
  const connections: Array<FakeConnection> = []
  const sockets = new WebSocketServer({ noServer: true })
  const server = createServer((_request, response) => {
    const now = new Date().toISOString()
    response.writeHead(200, { "content-type": "application/json" })
    response.end(JSON.stringify({
      machine: {
        id: FAKE_MACHINE_ID,
        name: "fake",
        status: "online",
        created_at: now,
        updated_at: now,
        hostname: "host",
        platform: "linux",
        architecture: "x86_64",
        daemon_version: "1.0.0",
        last_seen_at: now,
        metadata: {}
      },
      machine_token: "mt_fake",
      machine_token_expires_in: 3600,
      machine_ws_path: "/api/v1/machines/ws"
    }))
  })
  server.on("upgrade", (request, stream, head) =>
    sockets.handleUpgrade(request, stream, head, (socket) => {
      const frames: Array<Record<string, any>> = []
      const send = (message: Record<string, unknown>) => socket.send(JSON.stringify(message))
      connections.push({
        socket,
        frames,
        send,
        resultIds: (from = 0) => frames.slice(from).filter((frame) => frame.type === "result").map((frame) => frame.request_id)
      })
      socket.on("message", (data) => {
        const frame = JSON.parse(String(data))
        frames.push(frame)
        if (frame.type === "hello") {
          send({ type: "welcome", protocol_version: PROTOCOL_VERSION, machine_id: FAKE_MACHINE_ID, heartbeat_interval_seconds: 10 })
        }
      })
    }))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections,
    close: () => {
      for (const socket of sockets.clients) socket.terminate()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
