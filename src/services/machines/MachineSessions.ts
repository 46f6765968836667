/**
 * The machine WebSocket (docs/daemon-protocol.md, docs/machines.md): `GET /api/v1/machines/ws`
 * with `Authorization: Bearer <machine token>`. A missing, forged or expired token, a token of a
 * deleted machine or of a revoked credential is `401 unauthorized` before the upgrade. Then:
 * hello → welcome; the machine's pending requests and cancels are sent (again after each welcome,
 * and whenever its mailbox changes, or at least every POLL); results are stored, then
 * acknowledged; heartbeats move `last_seen_at` and re-check the machine and its credential;
 * `refresh_token` answers a new token while the credential is valid. The socket is read only as
 * fast as messages are handled (INBOX_CAPACITY, RESULTS_IN_FLIGHT); messages that do not decode
 * are ignored and logged once a run, MAX_UNDECODABLE_IN_A_ROW close the connection
 * (docs/machines.md, "A misbehaving daemon"). A frame over DAEMON_MESSAGE_MAX_BYTES closes it
 * with 1009 (the listener's limit, NodeServer.ts), logged once; a request over
 * SERVER_MESSAGE_MAX_BYTES, which the daemon would refuse, fails instead of being sent.
 */
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Socket } from "effect/socket"
import { Clock, Context, Deferred, Effect, Fiber, Layer, Option, PubSub, Queue, Redacted, Ref, Result, Schema, Semaphore } from "effect"
import { randomBytes } from "node:crypto"
import {
  type CloseReason,
  DaemonMessageJson,
  type Hello,
  type Outcome,
  PROTOCOL_VERSION,
  type Result as DaemonResult,
  type ServerMessage,
  ServerMessageJson
} from "../../domain/machines/DaemonProtocol.ts"
import { DAEMON_MESSAGE_MAX_BYTES, SERVER_MESSAGE_MAX_BYTES } from "../../domain/machines/MessageSizes.ts"
import { Unauthorized } from "../../domain/shared/Errors.ts"
import { type MachineId, MachinePoolId } from "../../domain/shared/Ids.ts"
import { Secrets } from "../configuration/Secrets.ts"
import { storableJson } from "../shared/StorableJson.ts"
import { ApiKeysRepository } from "../tenancy/ApiKeysRepository.ts"
import { DaemonTokensRepository } from "./DaemonTokensRepository.ts"
import { MachineHub } from "./MachineHub.ts"
import { MachinePoolsRepository } from "./MachinePoolsRepository.ts"
import { MachineRequestsRepository, type StoredRequest } from "./MachineRequestsRepository.ts"
import { MachineResults } from "./MachineResults.ts"
import { HEARTBEAT_INTERVAL_SECONDS, MachinesRepository, OFFLINE_AFTER_SECONDS } from "./MachinesRepository.ts"
import { type MachineTokenClaims, MachineTokens } from "./MachineTokens.ts"

/** The WebSocket close codes of the reasons that are not a normal closure (1000). */
const CLOSE_CODES: Partial<Record<CloseReason, number>> = { protocol_error: 1002, server_shutdown: 1001 }

/** The route of the machine WebSocket under /v1 (the daemon is told the /api/v1 one). */
export const MACHINE_WS_ROUTE = "/v1/machines/ws"
const HELLO_TIMEOUT = "10 seconds"
/** How often a connection looks at its machine's mailbox without being woken. */
const POLL = "1 second"
/**
 * The daemon's messages read from the socket and not yet handled. Once it is full the socket is
 * not read: a daemon that sends faster than its messages are handled is slowed by TCP, not
 * buffered in the server's memory.
 */
const INBOX_CAPACITY = 64
/** The results of one connection being stored at once; the next waits (and the inbox fills). */
const RESULTS_IN_FLIGHT = 4
/** Messages in a row that do not decode after which the connection is closed (`protocol_error`). */
export const MAX_UNDECODABLE_IN_A_ROW = 100

const unauthorized = (error: string) => new Unauthorized({ error })

/**
 * Whether the socket failed because the daemon sent a frame over the listener's limit (`ws`
 * refused it at its header and closed the connection with 1009).
 */
const isFrameTooLarge = (error: Socket.SocketError) =>
  error.reason._tag === "SocketReadError" &&
  (error.reason.cause as { error?: { code?: unknown } } | undefined)?.error?.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH"

/** The failure of a request too large to send: the daemon would close the connection (1009) and it would be sent again. */
const tooLargeToSend = (bytes: number): Outcome => ({
  outcome: "failed",
  error: {
    code: "request_too_large",
    message: `the request is ${bytes} bytes of JSON; the machine socket carries at most ${SERVER_MESSAGE_MAX_BYTES}, so it was not sent`
  }
})

const decodeMessage = Schema.decodeUnknownEffect(DaemonMessageJson)

/**
 * What a daemon says is text from outside: a command's output can hold a NUL, a daemon's JSON can
 * write an unpaired surrogate. Made storable as it comes in (StorableJson.ts), so a result, the
 * hello's operations and tools, and all that is made of them can be stored.
 */
const decode = (text: string) => Effect.map(decodeMessage(text), storableJson)

/**
 * Every termination of the socket, a clean close included, ends this fiber (with a SocketError).
 * The next batch is pulled only once this one is in the inbox (the reader pauses the socket meanwhile).
 * A frame read is a sign of life, though it waits in the inbox behind results being stored.
 */
const readIntoInbox = (
  machineId: MachineId,
  pull: Socket.Reader["pull"],
  inbox: Queue.Queue<string>,
  heardAt: Ref.Ref<number>
) =>
  pull.pipe(
    Effect.tap(() => Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(heardAt, now))),
    Effect.flatMap((frames) =>
      Queue.offerAll(inbox, frames.map((data) => typeof data === "string" ? data : new TextDecoder().decode(data)))
    ),
    Effect.forever,
    Effect.tapError((error) =>
      isFrameTooLarge(error)
        ? Effect.logWarning(
          `machine ${machineId} sent a frame over ${DAEMON_MESSAGE_MAX_BYTES} bytes; its connection was closed (1009)`
        )
        : Effect.void
    ),
    Effect.result,
    Effect.forkScoped
  )

/**
 * The session's socket, read into its inbox on a fiber of its own; `close` sends `close` and
 * ends the session. Acquiring the reader completes the WebSocket handshake; the connection is
 * closed with the session's scope.
 */
const openConnection = (socket: Socket.Socket, claims: MachineTokenClaims) =>
  Effect.gen(function*() {
    const machineId: MachineId = claims.sub
    const scope = yield* Effect.scope
    const { pull } = yield* socket.reader
    const { write } = yield* socket.writer
    const sendText = (text: string) => write(text).pipe(Effect.catch(() => Effect.void))
    const send = (message: ServerMessage) => sendText(Schema.encodeSync(ServerMessageJson)(message))
    const ended = yield* Deferred.make<void>()
    const close = (reason: CloseReason, message: string) =>
      send({ type: "close", reason, message }).pipe(
        Effect.andThen(write(new Socket.CloseEvent(CLOSE_CODES[reason] ?? 1000, reason))),
        Effect.ignore,
        Effect.andThen(Deferred.succeed(ended, undefined)),
        Effect.asVoid
      )
    const inbox = yield* Queue.bounded<string>(INBOX_CAPACITY)
    const heardAt = yield* Ref.make(yield* Clock.currentTimeMillis)
    const tokenExpiresAt = yield* Ref.make(claims.exp * 1000)
    const socketDone = yield* readIntoInbox(machineId, pull, inbox, heardAt)
    return { machineId, scope, sendText, send, close, ended, inbox, heardAt, tokenExpiresAt, socketDone } as const
  })

type Connection = Effect.Success<ReturnType<typeof openConnection>>

/** The daemon's first message, which must be a hello of this machine; none when the connection was closed instead. */
const receiveHello = (connection: Connection) =>
  Effect.gen(function*() {
    const { close, machineId } = connection
    const first = yield* Queue.take(connection.inbox).pipe(Effect.timeout(HELLO_TIMEOUT), Effect.option)
    if (Option.isNone(first)) {
      yield* close("protocol_error", `no hello within ${HELLO_TIMEOUT}`)
      return Option.none<Hello>()
    }
    const decoded = yield* Effect.result(decode(first.value))
    if (Result.isFailure(decoded) || decoded.success.type !== "hello") {
      yield* close("protocol_error", "the first message must be a hello")
      return Option.none<Hello>()
    }
    const hello = decoded.success
    if (hello.machine_id !== machineId) {
      yield* close("protocol_error", `this connection is machine ${machineId}'s, not ${hello.machine_id}'s`)
      return Option.none<Hello>()
    }
    if (hello.protocol_version < 1) {
      yield* close("protocol_version_unsupported", `this server speaks protocol version ${PROTOCOL_VERSION}`)
      return Option.none<Hello>()
    }
    return Option.some(hello)
  })

/** Liveness: a daemon silent for OFFLINE_AFTER, or whose token expired unrefreshed, is dropped. */
const liveness = (connection: Connection) =>
  Effect.gen(function*() {
    const { close } = connection
    const now = yield* Clock.currentTimeMillis
    if (now - (yield* Ref.get(connection.heardAt)) > OFFLINE_AFTER_SECONDS * 1000) {
      return yield* close("protocol_error", `no message for ${OFFLINE_AFTER_SECONDS} s`)
    }
    if (now > (yield* Ref.get(connection.tokenExpiresAt))) return yield* close("token_expired", "the machine token expired; register again")
  }).pipe(Effect.andThen(Effect.sleep(`${HEARTBEAT_INTERVAL_SECONDS} seconds`)), Effect.forever)

const make = Effect.gen(function*() {
  const tokens = yield* MachineTokens
  const machines = yield* MachinesRepository
  const requests = yield* MachineRequestsRepository
  const results = yield* MachineResults
  const hub = yield* MachineHub
  const daemonTokens = yield* DaemonTokensRepository
  const apiKeys = yield* ApiKeysRepository
  const secrets = yield* Secrets
  const pools = yield* MachinePoolsRepository

  /** Whether the daemon token, API key or machine pool (for its machines) that registered the machine still works. */
  const credentialValid = (credentialId: string) =>
    credentialId.startsWith("dtok_")
      ? daemonTokens.isValid(credentialId)
      : Schema.is(MachinePoolId)(credentialId)
      ? Effect.map(pools.findById(credentialId), Option.isSome)
      : apiKeys.exists(credentialId)

  const authenticate = (authorization: string | undefined) =>
    Effect.gen(function*() {
      const match = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? "")
      if (match === null) {
        return yield* Effect.fail(unauthorized("Send the machine token of the registration as 'Authorization: Bearer <machine_token>'"))
      }
      const claims = yield* tokens.verify(match[1]).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(unauthorized("The machine token is not valid or has expired; register the machine again")),
          onSome: Effect.succeed
        }))
      )
      const machine = yield* machines.findById(claims.sub)
      if (Option.isNone(machine) || machine.value.pool_state === "deleting" || machine.value.pool_state === "deleted") {
        return yield* Effect.fail(unauthorized(`Machine ${claims.sub} was deleted; register again`))
      }
      if (!(yield* credentialValid(claims.cred))) {
        return yield* Effect.fail(unauthorized("The daemon token or API key that registered this machine was revoked"))
      }
      return claims
    })

  /** The request as sent: a tool's environment with its secrets revealed (sent to the daemon only, never logged). */
  const requestMessage = (request: StoredRequest) =>
    Effect.gen(function*() {
      const operation = request.operation
      if (operation.operation !== "tool" || Object.keys(request.secret_env).length === 0) {
        return Result.succeed<ServerMessage>({ type: "request", request_id: request.request_id, ...operation })
      }
      const env: Record<string, string> = { ...operation.env }
      for (const [name, secretId] of Object.entries(request.secret_env)) {
        if (secretId === null) continue
        const value = yield* Effect.result(secrets.reveal(secretId))
        if (Result.isFailure(value)) {
          return Result.fail<Outcome>({
            outcome: "failed",
            error: { code: "internal_error", message: `The secret ${secretId} for ${name} no longer exists; the command did not run` }
          })
        }
        env[name] = Redacted.value(value.success)
      }
      return Result.succeed<ServerMessage>({ type: "request", request_id: request.request_id, ...operation, env })
    })

  /** Why the daemon cannot execute the request, if it cannot (its hello does not list the operation or tool). */
  const unsupported = (hello: Hello, request: StoredRequest): Outcome | undefined => {
    const operation = request.operation
    const known = hello.operations.includes(operation.operation) &&
      (operation.operation !== "tool" || hello.tools.includes(operation.tool))
    return known ? undefined : {
      outcome: "failed",
      error: {
        code: "unsupported_operation",
        message: `The daemon of this machine (${hello.daemon_version}) does not execute ${operation.operation}` +
          `${operation.operation === "tool" ? ` ${operation.tool}` : ""}; update it`
      }
    }
  }

  /**
   * The machine's connection: its hello's operations and tools recorded, its cleanup registered in
   * the session's scope, `welcome` sent; the connection's id, or none when it was closed instead.
   */
  const join = (connection: Connection, claims: MachineTokenClaims, hello: Hello) =>
    Effect.gen(function*() {
      const { close, machineId } = connection
      const connectionId = randomBytes(12).toString("base64url")
      if (!(yield* machines.connect(machineId, connectionId, hello.operations, hello.tools))) {
        yield* close("machine_deleted", `machine ${machineId} was deleted`)
        return Option.none<string>()
      }
      // Finalizers run last-added first: `ended` completes once the machine is marked disconnected.
      const sessionEnded = yield* Deferred.make<void>()
      yield* Effect.addFinalizer(() => Deferred.succeed(sessionEnded, undefined))
      const local = { machineId, connectionId, credentialId: claims.cred, close, ended: Deferred.await(sessionEnded) }
      yield* Effect.addFinalizer(() => Effect.andThen(hub.remove(local), machines.disconnect(machineId, connectionId)))
      // A connection whose hello comes once the server has begun stopping is told so at once.
      if (!(yield* hub.add(local))) {
        yield* close("server_shutdown", "the server is stopping")
        return Option.none<string>()
      }
      yield* connection.send({
        type: "welcome",
        protocol_version: Math.min(hello.protocol_version, PROTOCOL_VERSION),
        machine_id: machineId,
        heartbeat_interval_seconds: HEARTBEAT_INTERVAL_SECONDS
      })
      yield* Effect.logInfo(`machine ${machineId} connected`)
      return Option.some(connectionId)
    })

  /** Sends `request`, or completes it with why it cannot be sent; whether it was sent. */
  const sendRequest = (connection: Connection, hello: Hello, request: StoredRequest) =>
    Effect.gen(function*() {
      const refused = unsupported(hello, request)
      if (refused !== undefined) {
        yield* results.complete(request.request_id, refused)
        return false
      }
      const message = yield* requestMessage(request)
      if (Result.isFailure(message)) {
        yield* results.complete(request.request_id, message.failure)
        return false
      }
      const text = Schema.encodeSync(ServerMessageJson)(message.success)
      const bytes = Buffer.byteLength(text)
      if (bytes > SERVER_MESSAGE_MAX_BYTES) {
        yield* results.complete(request.request_id, tooLargeToSend(bytes))
        return false
      }
      yield* connection.sendText(text)
      return true
    })

  /**
   * The mailbox: every request without a result, every cancel not yet sent on this connection,
   * sent whenever the machine is woken, or at least every POLL.
   */
  const mailboxOf = (connection: Connection, hello: Hello) =>
    Effect.gen(function*() {
      const { machineId } = connection
      const sentRequests = new Set<string>()
      const sentCancels = new Set<string>()
      // Each pass reads the pending ids; only the requests not yet sent on this connection are read whole.
      const pump = Effect.gen(function*() {
        const pending = yield* requests.pending(machineId)
        const unsent = yield* requests.findPending(pending.flatMap((row) => sentRequests.has(row.request_id) ? [] : [row.request_id]))
        const newlySent: Array<string> = []
        for (const request of unsent) {
          sentRequests.add(request.request_id)
          if (yield* sendRequest(connection, hello, request)) newlySent.push(request.request_id)
        }
        for (const row of pending) {
          if (row.cancel_requested && !sentCancels.has(row.request_id)) {
            sentCancels.add(row.request_id)
            yield* connection.send({ type: "cancel", request_id: row.request_id })
          }
        }
        yield* requests.markSent(newlySent)
      })
      const wakeups = yield* hub.subscribe
      return pump.pipe(
        Effect.andThen(Effect.raceFirst(
          PubSub.take(wakeups).pipe(Effect.repeat({ until: (id) => id === machineId })),
          Effect.sleep(POLL)
        )),
        Effect.forever
      )
    })

  /** A heartbeat: `last_seen_at` moved, the machine and its credential checked again, acknowledged. */
  const answerHeartbeat = (connection: Connection, connectionId: string) =>
    Effect.gen(function*() {
      const { close, machineId } = connection
      const row = yield* machines.heartbeat(machineId, connectionId)
      if (Option.isNone(row)) {
        return yield* Option.isNone(yield* machines.findById(machineId))
          ? close("machine_deleted", `machine ${machineId} was deleted`)
          : close("superseded", "another connection of this machine replaced this one")
      }
      if (!(yield* credentialValid(row.value.credential_id))) {
        return yield* close("revoked", "the daemon token or API key that registered this machine was revoked")
      }
      return yield* connection.send({ type: "heartbeat_ack" })
    })

  /** `refresh_token`: a new token while the machine and its credential are valid. */
  const refreshToken = (connection: Connection) =>
    Effect.gen(function*() {
      const { close, machineId } = connection
      const machine = yield* machines.findById(machineId)
      if (Option.isNone(machine)) return yield* close("machine_deleted", `machine ${machineId} was deleted`)
      if (!(yield* credentialValid(machine.value.credential_id))) {
        return yield* close("revoked", "the daemon token or API key that registered this machine was revoked")
      }
      const token = yield* tokens.issue(machineId, machine.value.credential_id)
      yield* Ref.set(connection.tokenExpiresAt, (yield* Clock.currentTimeMillis) + token.expiresIn * 1000)
      return yield* connection.send({ type: "token", machine_token: token.token, machine_token_expires_in: token.expiresIn })
    })

  /**
   * A result, stored (and its turn woken) on a fiber of its own in the session's scope, so one
   * slow transaction does not hold up the others; acknowledged once stored. At most
   * RESULTS_IN_FLIGHT at once (`storing`): the next message waits for a permit.
   */
  const storeResult = (connection: Connection, storing: Semaphore.Semaphore, result: DaemonResult) =>
    Effect.gen(function*() {
      const { machineId } = connection
      yield* Semaphore.take(storing, 1)
      return yield* results.fromDaemon(machineId, result).pipe(
        Effect.andThen(connection.send({ type: "ack", request_ids: [result.request_id] })),
        Effect.catchCause((cause) => Effect.logWarning(`machine ${machineId}: storing a result failed`, cause)),
        Effect.ensuring(Semaphore.release(storing, 1)),
        Effect.forkIn(connection.scope),
        Effect.asVoid
      )
    })

  /**
   * The daemon's messages, one at a time. Of a run of messages that do not decode, the first is
   * logged, the run's length when it ends; a run of MAX_UNDECODABLE_IN_A_ROW closes the connection.
   */
  const messagesOf = (connection: Connection, connectionId: string) =>
    Effect.gen(function*() {
      const { close, machineId } = connection
      const storing = yield* Semaphore.make(RESULTS_IN_FLIGHT)
      let undecodableInARow = 0
      const onMessage = (text: string) =>
        Effect.gen(function*() {
          const message = yield* Effect.result(decode(text))
          if (Result.isFailure(message)) {
            undecodableInARow++
            if (undecodableInARow === 1) {
              yield* Effect.logWarning(`machine ${machineId} sent a message that does not decode (the rest of the run is counted)`)
            }
            if (undecodableInARow === MAX_UNDECODABLE_IN_A_ROW) {
              return yield* close("protocol_error", `${MAX_UNDECODABLE_IN_A_ROW} messages in a row did not decode`)
            }
            return
          }
          if (undecodableInARow > 1) {
            yield* Effect.logWarning(`machine ${machineId} sent ${undecodableInARow} messages in a row that do not decode`)
          }
          undecodableInARow = 0
          switch (message.success.type) {
            case "heartbeat":
              return yield* answerHeartbeat(connection, connectionId)
            case "refresh_token":
              return yield* refreshToken(connection)
            case "result":
              return yield* storeResult(connection, storing, message.success)
            case "hello":
              return yield* close("protocol_error", "a second hello on one connection")
          }
        })
      return Queue.take(connection.inbox).pipe(Effect.flatMap(onMessage), Effect.forever)
    })

  /** One session: hello, then the mailbox, the daemon's messages and liveness until one of them ends it. */
  const session = (socket: Socket.Socket, claims: MachineTokenClaims) =>
    Effect.gen(function*() {
      const connection = yield* openConnection(socket, claims)
      const hello = yield* receiveHello(connection)
      if (Option.isNone(hello)) return
      const connectionId = yield* join(connection, claims, hello.value)
      if (Option.isNone(connectionId)) return
      const mailbox = yield* mailboxOf(connection, hello.value)
      const messages = yield* messagesOf(connection, connectionId.value)
      yield* Effect.raceAll([
        Deferred.await(connection.ended),
        Effect.asVoid(Fiber.await(connection.socketDone)),
        mailbox,
        messages,
        liveness(connection)
      ])
      yield* Effect.logInfo(`machine ${connection.machineId} disconnected`)
    }).pipe(Effect.scoped)

  /** The route: 401 before the upgrade, else the session until the socket closes. */
  const handle = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const claims = yield* Effect.result(authenticate(request.headers["authorization"]))
    if (Result.isFailure(claims)) {
      return yield* HttpServerResponse.json({ error: claims.failure.error, code: "unauthorized" }, { status: 401 })
    }
    const socket = yield* Effect.result(request.upgrade)
    if (Result.isFailure(socket)) {
      return yield* HttpServerResponse.json(
        { error: "This route opens a WebSocket: send an upgrade request", code: "invalid_request" },
        { status: 400 }
      )
    }
    yield* session(socket.success, claims.success).pipe(
      Effect.catchCause((cause) => Effect.logWarning(`machine ${claims.success.sub}: the connection failed`, cause))
    )
    // Never written (the socket was upgraded): what the request's log line gives as its status.
    return HttpServerResponse.empty({ status: 101 })
  })

  /** At shutdown: every session of this process is sent `close` `server_shutdown`, its socket closed (1001). */
  const closeAtShutdown = hub.closeAll("server_shutdown", "the server is stopping")

  return { handle, closeAtShutdown } as const
})

export class MachineSessions extends Context.Service<MachineSessions, Effect.Success<typeof make>>()("MachineSessions") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MachineTokens.layer,
      MachinesRepository.layer,
      MachineRequestsRepository.layer,
      MachineResults.layer,
      MachineHub.layer,
      DaemonTokensRepository.layer,
      ApiKeysRepository.layer,
      Secrets.layer,
      MachinePoolsRepository.layer
    ])
  )
}
