/**
 * One connection to the machine WebSocket, from the upgrade to its end (docs/daemon-protocol.md):
 * the daemon says hello, waits for the welcome, re-sends every unacknowledged result, then
 * serves the server's messages in order while it sends heartbeats and asks for a fresh machine
 * token before the current one expires. A connection always ends in an error: `ConnectionLost`
 * (the daemon reconnects) or `DaemonStop` (it cannot go on: no protocol version in common, or
 * another daemon connected as this machine).
 */
import { Socket } from "effect/socket"
import { Clock, Data, Deferred, Effect, Fiber, Queue, Ref, Result, Schedule, Schema } from "effect"
import WebSocket from "ws"
import {
  type Close,
  type DaemonMessage,
  OPERATIONS,
  PROTOCOL_VERSION,
  RequestEnvelope,
  type ServerMessage,
  ServerMessageJson,
  type Welcome
} from "../domain/machines/DaemonProtocol.ts"
import { MachineToolName } from "../domain/machines/MachineTools.ts"
import { SERVER_MESSAGE_MAX_BYTES } from "../domain/machines/MessageSizes.ts"
import type { RegisterMachineResponse } from "../domain/machines/Registration.ts"
import { DaemonConfig, machineFacts } from "./DaemonConfig.ts"
import { Outbox } from "./Outbox.ts"
import { outgoingText } from "./OutgoingMessage.ts"
import { RequestLedger } from "./RequestLedger.ts"
import { RequestRunner } from "./RequestRunner.ts"

export class ConnectionLost extends Data.TaggedError("ConnectionLost")<{
  readonly message: string
  /** The connection got as far as the welcome (the reconnect backoff starts afresh). */
  readonly welcomed: boolean
  /** The server closed it because it is stopping (`server_shutdown`): expected, not a fault. */
  readonly serverStopping?: boolean
}> {}

export class DaemonStop extends Data.TaggedError("DaemonStop")<{ readonly message: string }> {}

export const WELCOME_TIMEOUT = "10 seconds"
/** The server is taken for gone after this many heartbeat intervals without a message from it. */
export const SILENT_INTERVALS = 3
/** A token is refreshed after this share of its lifetime, and asked for again this often until one comes. */
const REFRESH_AT = 2 / 3
const REFRESH_RETRY_MS = 30_000

const webSocketUrl = (server: URL, path: string) => {
  const url = new URL(path, server)
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:"
  return url
}

/** What failed, in the words the daemon has always logged (Read, Write, Open, OpenTimeout). */
const failedStep = (reason: Exclude<Socket.SocketErrorReason, Socket.SocketCloseError>) => {
  switch (reason._tag) {
    case "SocketReadError":
      return "Read"
    case "SocketWriteError":
      return "Write"
    case "SocketOpenError":
      return reason.kind === "Timeout" ? "OpenTimeout" : "Open"
    case "SocketUpgradeError":
      return "Upgrade"
  }
}

const describeSocketError = (error: Socket.SocketError) => {
  const reason = error.reason
  if (reason._tag === "SocketCloseError") {
    return `the connection closed (${reason.code}${reason.closeReason ? ` ${reason.closeReason}` : ""})`
  }
  const cause = reason.cause as { message?: unknown; error?: { message?: unknown } } | undefined
  const detail = cause?.error?.message ?? cause?.message ?? String(reason.cause)
  return `the connection failed (${failedStep(reason)}): ${detail}`
}

const TOOL_NAMES: ReadonlyArray<string> = MachineToolName.literals

export const connect = (registration: RegisterMachineResponse) =>
  Effect.gen(function*() {
    const config = yield* DaemonConfig
    const ledger = yield* RequestLedger
    const runner = yield* RequestRunner
    const outbox = yield* Outbox
    const url = webSocketUrl(config.server, registration.machine_ws_path)

    // Every close, even a normal one (1000), ends the reader with a SocketCloseError: a connection always ends in an error.
    // A frame over SERVER_MESSAGE_MAX_BYTES, which the server never sends, closes it (1009).
    const socket = yield* Socket.fromWebSocket(
      Effect.acquireRelease(
        Effect.sync(() =>
          new WebSocket(url, {
            headers: { authorization: `Bearer ${registration.machine_token}` },
            maxPayload: SERVER_MESSAGE_MAX_BYTES
          })
        ),
        (ws) => Effect.sync(() => ws.close(1000))
      ),
      { openTimeout: "10 seconds" }
    )
    const { write } = yield* socket.writer
    // Done once the socket's reading has ended: the socket is closed, or closing.
    const socketEnded = yield* Deferred.make<void>()
    // A write on a closed socket waits for it to open again, which it never does (a reconnect makes a new
    // socket): a send races its write against the socket's end, so it returns at once on a connection that has
    // ended, or ends while it writes. What it did not send is in the ledger, sent again after the next welcome.
    const send = (message: DaemonMessage) =>
      write(outgoingText(message)).pipe(
        Effect.catch((error) => Effect.logDebug(`a message was not sent: ${error.message}`)),
        Effect.raceFirst(Deferred.await(socketEnded))
      )

    const welcomed = yield* Ref.make(false)
    const lost = (message: string, serverStopping = false) =>
      Effect.flatMap(Ref.get(welcomed), (welcomed) => Effect.fail(new ConnectionLost({ message, welcomed, serverStopping })))
    const welcome = yield* Deferred.make<Welcome>()
    const heardAt = yield* Ref.make(yield* Clock.currentTimeMillis)
    const refreshAt = yield* Ref.make((yield* Clock.currentTimeMillis) + registration.machine_token_expires_in * 1000 * REFRESH_AT)
    const closeMessage = yield* Ref.make<Close | undefined>(undefined)

    // Messages are handled one at a time, in the order they came.
    const inbox = yield* Queue.unbounded<string | Uint8Array>()
    // The socket is opened and read in its own scope: it closes when reading ends (the connection closed or failed).
    const socketFiber = yield* Effect.gen(function*() {
      const reader = yield* socket.reader
      yield* send({
        type: "hello",
        protocol_version: PROTOCOL_VERSION,
        machine_id: registration.machine.id,
        ...machineFacts(),
        directories: config.directories,
        operations: OPERATIONS,
        tools: TOOL_NAMES
      })
      return yield* reader.pull.pipe(
        Effect.flatMap((chunk) => Effect.sync(() => void Queue.offerAllUnsafe(inbox, chunk))),
        Effect.forever
      )
    }).pipe(Effect.scoped, Effect.ensuring(Deferred.succeed(socketEnded, undefined)), Effect.forkScoped)

    /** A request this daemon cannot decode is still answered, under its id; anything else is ignored. */
    const undecodable = (text: string, problem: string) => {
      const envelope = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Struct({
        ...RequestEnvelope.fields,
        operation: Schema.optional(Schema.Unknown),
        tool: Schema.optional(Schema.Unknown)
      })))(text)
      if (Result.isFailure(envelope)) return Effect.logWarning(`ignored a message this daemon does not understand: ${problem}`)
      const { request_id, operation, tool } = envelope.success
      const known = OPERATIONS.includes(operation as never) && (operation !== "tool" || TOOL_NAMES.includes(tool as string))
      return runner.refuse(
        request_id,
        known
          ? { code: "invalid_request", message: `the request is invalid: ${problem}` }
          : { code: "unsupported_operation", message: `this daemon does not know ${String(operation)}${operation === "tool" ? ` ${String(tool)}` : ""}; update it` }
      )
    }

    const handle = (message: ServerMessage): Effect.Effect<void, DaemonStop> => {
      switch (message.type) {
        case "welcome":
          return message.protocol_version === PROTOCOL_VERSION
            ? Deferred.succeed(welcome, message)
            : Effect.fail(new DaemonStop({
              message: `the server chose protocol version ${message.protocol_version}; this daemon speaks ${PROTOCOL_VERSION}`
            }))
        case "request":
          return runner.run(message)
        case "cancel":
          return runner.cancel(message.request_id)
        case "ack":
          return ledger.acknowledge(message.request_ids)
        case "token":
          return Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Ref.set(refreshAt, now + message.machine_token_expires_in * 1000 * REFRESH_AT))
        case "heartbeat_ack":
          return Effect.void
        case "close":
          switch (message.reason) {
            case "protocol_version_unsupported":
              return Effect.fail(new DaemonStop({ message: `the server does not speak this daemon's protocol: ${message.message}; update the daemon` }))
            // Only another daemon with this machine's identity replaces the connection the daemon is on: its own
            // earlier connections, which a reconnect replaces, are closed by then and their messages never read.
            // Reconnecting would replace the other daemon in turn, each of them about every second, for ever.
            case "superseded":
              return Effect.fail(new DaemonStop({
                message: `another daemon connected as this machine (${registration.machine.id}), with a copy of this daemon's state file ` +
                  "(a cloned machine, a home directory shared by two, a restored backup?); this one stops so that the two do not replace " +
                  "each other for ever. To run both, start this one again with a state file of its own (--state, or its file moved " +
                  "away): it registers as a new machine"
              }))
            default:
              return Ref.set(closeMessage, message)
          }
      }
    }

    const consumer = Queue.take(inbox).pipe(
      Effect.tap(() => Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(heardAt, now))),
      Effect.flatMap((data) => {
        const text = typeof data === "string" ? data : new TextDecoder().decode(data)
        return Schema.decodeUnknownEffect(ServerMessageJson)(text).pipe(
          Effect.matchEffect({ onFailure: (error) => undecodable(text, error.message), onSuccess: handle })
        )
      }),
      Effect.forever
    )

    const heartbeats = (intervalSeconds: number) =>
      Effect.gen(function*() {
        const silentMs = (yield* Clock.currentTimeMillis) - (yield* Ref.get(heardAt))
        if (silentMs > SILENT_INTERVALS * intervalSeconds * 1000) {
          return yield* lost(`the server sent nothing for ${Math.round(silentMs / 1000)} s`)
        }
        yield* send({ type: "heartbeat" })
      }).pipe(Effect.repeat(Schedule.spaced(`${intervalSeconds} seconds`)))

    const tokenRefresh = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (now < (yield* Ref.get(refreshAt))) return
      yield* send({ type: "refresh_token" })
      yield* Ref.set(refreshAt, now + REFRESH_RETRY_MS)
    }).pipe(Effect.repeat(Schedule.spaced("1 second")))

    const session = Effect.gen(function*() {
      const { heartbeat_interval_seconds } = yield* Deferred.await(welcome).pipe(
        Effect.timeoutOrElse({
          duration: WELCOME_TIMEOUT,
          orElse: () => Effect.fail(new ConnectionLost({ message: "no welcome from the server", welcomed: false }))
        })
      )
      yield* Ref.set(welcomed, true)
      yield* outbox.attach(send)
      for (const { request_id, outcome } of yield* ledger.unacknowledged) yield* send({ type: "result", request_id, ...outcome })
      yield* Effect.logInfo(`connected to ${url.origin} as machine ${registration.machine.id}`)
      return yield* Effect.all([heartbeats(heartbeat_interval_seconds), tokenRefresh], { concurrency: "unbounded" })
    })

    const socketEnd = Fiber.join(socketFiber).pipe(
      Effect.result,
      Effect.flatMap((ended) =>
        Effect.flatMap(Ref.get(closeMessage), (close) =>
          close !== undefined
            ? lost(`the server closed the connection: ${close.reason}: ${close.message}`, close.reason === "server_shutdown")
            : lost(Result.isFailure(ended) ? describeSocketError(ended.failure) : "the connection closed"))
      )
    )

    return yield* session.pipe(
      Effect.andThen(Effect.never),
      Effect.raceFirst(socketEnd),
      Effect.raceFirst(consumer)
    )
  }).pipe(
    Effect.ensuring(Outbox.use((outbox) => outbox.detach)),
    Effect.scoped
  )
