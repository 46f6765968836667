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
import type { MachineId } from "../domain/shared/Ids.ts"
import { DaemonConfig, machineFacts } from "./DaemonConfig.ts"
import { Outbox, type Send } from "./Outbox.ts"
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

/** The WebSocket to the server, with the machine's token: opened when it is first read, closed with that read's scope. */
const machineSocket = (url: URL, machineToken: string) =>
  // Every close, even a normal one (1000), ends the reader with a SocketCloseError: a connection always ends in an error.
  // A frame over SERVER_MESSAGE_MAX_BYTES, which the server never sends, closes it (1009).
  Socket.fromWebSocket(
    Effect.acquireRelease(
      Effect.sync(() =>
        new WebSocket(url, {
          headers: { authorization: `Bearer ${machineToken}` },
          maxPayload: SERVER_MESSAGE_MAX_BYTES
        })
      ),
      (ws) => Effect.sync(() => ws.close(1000))
    ),
    { openTimeout: "10 seconds" }
  )

/**
 * A write on a closed socket waits for it to open again, which it never does (a reconnect makes a new
 * socket): a send races its write against the socket's end, so it returns at once on a connection that has
 * ended, or ends while it writes. What it did not send is in the ledger, sent again after the next welcome.
 */
const sendUntilEnded = (write: Socket.Writer["write"], socketEnded: Deferred.Deferred<void>) => (message: DaemonMessage) =>
  write(outgoingText(message)).pipe(
    Effect.catch((error) => Effect.logDebug(`a message was not sent: ${error.message}`)),
    Effect.raceFirst(Deferred.await(socketEnded))
  )

/** What the steps of one connection share besides the socket. */
const connectionState = (tokenExpiresInSeconds: number) =>
  Effect.gen(function*() {
    return {
      /** The welcome came (`ConnectionLost.welcomed`). */
      welcomed: yield* Ref.make(false),
      welcome: yield* Deferred.make<Welcome>(),
      /** When the server was last heard from. */
      heardAt: yield* Ref.make(yield* Clock.currentTimeMillis),
      /** When to ask for a fresh machine token. */
      refreshAt: yield* Ref.make((yield* Clock.currentTimeMillis) + tokenExpiresInSeconds * 1000 * REFRESH_AT),
      /** The server's `close`, when it said why before closing. */
      closeMessage: yield* Ref.make<Close | undefined>(undefined)
    }
  })

type ConnectionState = Effect.Success<ReturnType<typeof connectionState>>

const lost = (state: ConnectionState, message: string, serverStopping = false) =>
  Effect.flatMap(Ref.get(state.welcomed), (welcomed) => Effect.fail(new ConnectionLost({ message, welcomed, serverStopping })))

/** The daemon's first message: who it is, and what it can do. */
const hello = (registration: RegisterMachineResponse, directories: ReadonlyArray<string>): DaemonMessage => ({
  type: "hello",
  protocol_version: PROTOCOL_VERSION,
  machine_id: registration.machine.id,
  ...machineFacts(),
  directories,
  operations: OPERATIONS,
  tools: TOOL_NAMES
})

/**
 * Opens the socket and reads it in a scope of its own, so that it closes when reading ends (the
 * connection closed or failed): says hello once it is open, then queues what comes.
 */
const readSocket = (socket: Socket.Socket, inbox: Queue.Queue<string | Uint8Array>, sayHello: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const reader = yield* socket.reader
    yield* sayHello
    return yield* reader.pull.pipe(
      Effect.flatMap((chunk) => Effect.sync(() => void Queue.offerAllUnsafe(inbox, chunk))),
      Effect.forever
    )
  }).pipe(Effect.scoped)

/** A request this daemon cannot decode is still answered, under its id; anything else is ignored. */
const answerUndecodable = (runner: typeof RequestRunner.Service, text: string, problem: string) => {
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

/** The server's `close`: the daemon stops when it cannot go on; any other reason is kept, told when the socket ends. */
const closeReceived = (state: ConnectionState, machineId: MachineId, message: Close): Effect.Effect<void, DaemonStop> => {
  switch (message.reason) {
    case "protocol_version_unsupported":
      return Effect.fail(new DaemonStop({ message: `the server does not speak this daemon's protocol: ${message.message}; update the daemon` }))
    // Only another daemon with this machine's identity replaces the connection the daemon is on: its own
    // earlier connections, which a reconnect replaces, are closed by then and their messages never read.
    // Reconnecting would replace the other daemon in turn, each of them about every second, for ever.
    case "superseded":
      return Effect.fail(new DaemonStop({
        message: `another daemon connected as this machine (${machineId}), with a copy of this daemon's state file ` +
          "(a cloned machine, a home directory shared by two, a restored backup?); this one stops so that the two do not replace " +
          "each other for ever. To run both, start this one again with a state file of its own (--state, or its file moved " +
          "away): it registers as a new machine"
      }))
    default:
      return Ref.set(state.closeMessage, message)
  }
}

/** What the daemon does with each message of the server. */
const handleMessage = (
  runner: typeof RequestRunner.Service,
  ledger: typeof RequestLedger.Service,
  state: ConnectionState,
  machineId: MachineId
) =>
(message: ServerMessage): Effect.Effect<void, DaemonStop> => {
  switch (message.type) {
    case "welcome":
      return message.protocol_version === PROTOCOL_VERSION
        ? Deferred.succeed(state.welcome, message)
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
        Ref.set(state.refreshAt, now + message.machine_token_expires_in * 1000 * REFRESH_AT))
    case "heartbeat_ack":
      return Effect.void
    case "close":
      return closeReceived(state, machineId, message)
  }
}

/** Takes what the socket read, as it came, and handles each as a server message; each is word from the server (`heardAt`). */
const serveInbox = (inbox: Queue.Queue<string | Uint8Array>, state: ConnectionState, machineId: MachineId) =>
  Effect.gen(function*() {
    const runner = yield* RequestRunner
    const handle = handleMessage(runner, yield* RequestLedger, state, machineId)
    return yield* Queue.take(inbox).pipe(
      Effect.tap(() => Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(state.heardAt, now))),
      Effect.flatMap((data) => {
        const text = typeof data === "string" ? data : new TextDecoder().decode(data)
        return Schema.decodeUnknownEffect(ServerMessageJson)(text).pipe(
          Effect.matchEffect({ onFailure: (error) => answerUndecodable(runner, text, error.message), onSuccess: handle })
        )
      }),
      Effect.forever
    )
  })

/** A heartbeat every interval; the connection is lost once the server has been silent for SILENT_INTERVALS of them. */
const heartbeats = (state: ConnectionState, send: Send, intervalSeconds: number) =>
  Effect.gen(function*() {
    const silentMs = (yield* Clock.currentTimeMillis) - (yield* Ref.get(state.heardAt))
    if (silentMs > SILENT_INTERVALS * intervalSeconds * 1000) {
      return yield* lost(state, `the server sent nothing for ${Math.round(silentMs / 1000)} s`)
    }
    yield* send({ type: "heartbeat" })
  }).pipe(Effect.repeat(Schedule.spaced(`${intervalSeconds} seconds`)))

/** Asks for a fresh machine token once `refreshAt` has come, and again every REFRESH_RETRY_MS until one comes. */
const tokenRefresh = (state: ConnectionState, send: Send) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    if (now < (yield* Ref.get(state.refreshAt))) return
    yield* send({ type: "refresh_token" })
    yield* Ref.set(state.refreshAt, now + REFRESH_RETRY_MS)
  }).pipe(Effect.repeat(Schedule.spaced("1 second")))

/**
 * Waits for the welcome, hands the outbox this connection, re-sends every unacknowledged result,
 * then sends heartbeats and asks for fresh tokens until the server is silent too long.
 */
const session = (state: ConnectionState, send: Send, url: URL, machineId: MachineId) =>
  Effect.gen(function*() {
    const ledger = yield* RequestLedger
    const outbox = yield* Outbox
    const { heartbeat_interval_seconds } = yield* Deferred.await(state.welcome).pipe(
      Effect.timeoutOrElse({
        duration: WELCOME_TIMEOUT,
        orElse: () => Effect.fail(new ConnectionLost({ message: "no welcome from the server", welcomed: false }))
      })
    )
    yield* Ref.set(state.welcomed, true)
    yield* outbox.attach(send)
    for (const { request_id, outcome } of yield* ledger.unacknowledged) yield* send({ type: "result", request_id, ...outcome })
    yield* Effect.logInfo(`connected to ${url.origin} as machine ${machineId}`)
    return yield* Effect.all([heartbeats(state, send, heartbeat_interval_seconds), tokenRefresh(state, send)], { concurrency: "unbounded" })
  })

/** Once the socket's reading has ended: the connection is lost, for the reason the server's `close` gave, else the socket's. */
const socketEnd = (state: ConnectionState, socketFiber: Fiber.Fiber<never, Socket.SocketError>) =>
  Fiber.join(socketFiber).pipe(
    Effect.result,
    Effect.flatMap((ended) =>
      Effect.flatMap(Ref.get(state.closeMessage), (close) =>
        close !== undefined
          ? lost(state, `the server closed the connection: ${close.reason}: ${close.message}`, close.reason === "server_shutdown")
          : lost(state, Result.isFailure(ended) ? describeSocketError(ended.failure) : "the connection closed"))
    )
  )

export const connect = (registration: RegisterMachineResponse) =>
  Effect.gen(function*() {
    const config = yield* DaemonConfig
    const url = webSocketUrl(config.server, registration.machine_ws_path)

    const socket = yield* machineSocket(url, registration.machine_token)
    const { write } = yield* socket.writer
    // Done once the socket's reading has ended: the socket is closed, or closing.
    const socketEnded = yield* Deferred.make<void>()
    const send = sendUntilEnded(write, socketEnded)
    const state = yield* connectionState(registration.machine_token_expires_in)

    // Messages are handled one at a time, in the order they came.
    const inbox = yield* Queue.unbounded<string | Uint8Array>()
    const socketFiber = yield* readSocket(socket, inbox, Effect.suspend(() => send(hello(registration, config.directories)))).pipe(
      Effect.ensuring(Deferred.succeed(socketEnded, undefined)),
      Effect.forkScoped
    )

    return yield* session(state, send, url, registration.machine.id).pipe(
      Effect.andThen(Effect.never),
      Effect.raceFirst(socketEnd(state, socketFiber)),
      Effect.raceFirst(serveInbox(inbox, state, registration.machine.id))
    )
  }).pipe(
    Effect.ensuring(Outbox.use((outbox) => outbox.detach)),
    Effect.scoped
  )
