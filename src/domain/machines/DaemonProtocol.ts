/**
 * The protocol spoken over the machine WebSocket (docs/daemon-protocol.md): one JSON object per
 * text frame, told apart by `type`. The daemon says `hello` with the highest protocol version it
 * speaks; the server's `welcome` names the version both use.
 *
 * A request carries one operation, told apart by `operation`. New operations are new members of
 * `Operation`: a daemon lists the operations and tools it knows in its hello, the server sends
 * only those, and a daemon that receives one it does not know answers `unsupported_operation`.
 */
import { Effect, Schema, Struct, Tuple } from "effect"
import { MachineId } from "../shared/Ids.ts"
import { optional } from "../shared/Optional.ts"
import { FileContent, FileReadOperation, FileWriteOperation, WrittenFile } from "./MachineFiles.ts"
import { MACHINE_TOOLS, MachineToolName } from "./MachineTools.ts"
import { OperationFailure } from "./OperationFailure.ts"
import {
  CheckpointContent,
  CheckpointCreateOperation,
  CheckpointRestoreOperation,
  WorktreeCreateOperation,
  WorktreeLocation
} from "./WorkspaceOperations.ts"

/** The version this code speaks. It changes only when a message changes in a way an older peer cannot read. */
export const PROTOCOL_VERSION = 1

/** Chosen by the server, unique per machine for ever: a daemon executes each request id at most once. */
export const RequestId = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[A-Za-z0-9_.:-]{1,128}$/u, { message: "must be 1 to 128 characters of [A-Za-z0-9_.:-]" }))
)
export type RequestId = typeof RequestId.Type

/**
 * The fields of `envelope` followed by those of a struct (a request's or result's `type` and
 * `request_id` come first on the wire), for each member of an operation or outcome union.
 */
interface withEnvelope<Envelope extends Schema.Struct.Fields> extends Struct.Lambda {
  <Fields extends Schema.Struct.Fields>(struct: Schema.Struct<Fields>): Schema.Struct<Struct.Simplify<Envelope & Fields>>
  readonly "~lambda.out": this["~lambda.in"] extends Schema.Struct<Schema.Struct.Fields>
    ? Schema.Struct<Struct.Simplify<Envelope & this["~lambda.in"]["fields"]>>
    : never
}
const withEnvelope = <const Envelope extends Schema.Struct.Fields>(envelope: Envelope) =>
  Struct.lambda<withEnvelope<Envelope>>((struct) => Schema.Struct({ ...envelope, ...struct.fields }))

const Version = Schema.Number.pipe(Schema.check(Schema.isInt()), Schema.check(Schema.isGreaterThan(0)))

// ---- Operations ----

/**
 * A built-in tool call of an agent. `cwd` resolves relative paths; `env` overlays the command's
 * environment; `unset_env` names variables removed from the environment the command inherits from
 * the daemon (a config's overlay that sets them to `null`).
 */
export const ToolOperation = Schema.Struct({
  operation: Schema.Literal("tool"),
  tool_call_id: Schema.String,
  tool: MachineToolName,
  input: Schema.Record(Schema.String, Schema.Unknown),
  cwd: Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed(null))),
  env: Schema.Record(Schema.String, Schema.String).pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed({}))),
  unset_env: Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed([])))
})
export type ToolOperation = typeof ToolOperation.Type

export const Operation = Schema.Union([
  ToolOperation,
  FileReadOperation,
  FileWriteOperation,
  WorktreeCreateOperation,
  CheckpointCreateOperation,
  CheckpointRestoreOperation
])
export type Operation = typeof Operation.Type
export type OperationName = Operation["operation"]

/** The operations this code knows, as a daemon lists them in its hello. */
export const OPERATIONS: ReadonlyArray<OperationName> = [
  "tool",
  "file.read",
  "file.write",
  "worktree.create",
  "checkpoint.create",
  "checkpoint.restore"
]

/** The schema of a succeeded result's `output` for an operation. */
export const outputSchemaOf = (operation: Operation): Schema.Codec<any, any> => {
  switch (operation.operation) {
    case "tool":
      return MACHINE_TOOLS[operation.tool].output
    case "file.read":
      return FileContent
    case "file.write":
      return WrittenFile
    case "worktree.create":
    case "checkpoint.restore":
      return WorktreeLocation
    case "checkpoint.create":
      return CheckpointContent
  }
}

// ---- Server to daemon ----

export const Welcome = Schema.Struct({
  type: Schema.Literal("welcome"),
  protocol_version: Version,
  machine_id: MachineId,
  heartbeat_interval_seconds: Schema.Number.pipe(Schema.check(Schema.isInt()), Schema.check(Schema.isGreaterThan(0)))
})
export type Welcome = typeof Welcome.Type

export const Request = Operation.mapMembers(
  Tuple.map(withEnvelope({ type: Schema.Literal("request"), request_id: RequestId }))
)
export type Request = typeof Request.Type

/** The part of a request every version can read: enough to answer one this daemon cannot decode. */
export const RequestEnvelope = Schema.Struct({ type: Schema.Literal("request"), request_id: RequestId })

export const Cancel = Schema.Struct({ type: Schema.Literal("cancel"), request_id: RequestId })
export type Cancel = typeof Cancel.Type

/** The server stored these results: the daemon may forget them. */
export const Ack = Schema.Struct({
  type: Schema.Literal("ack"),
  request_ids: Schema.NonEmptyArray(RequestId)
})
export type Ack = typeof Ack.Type

export const Token = Schema.Struct({
  type: Schema.Literal("token"),
  machine_token: Schema.String,
  machine_token_expires_in: Schema.Number.pipe(Schema.check(Schema.isInt()), Schema.check(Schema.isGreaterThan(0)))
})
export type Token = typeof Token.Type

export const HeartbeatAck = Schema.Struct({ type: Schema.Literal("heartbeat_ack") })

export const CloseReason = Schema.Literals([
  /** No version both sides speak: the daemon must be updated. The daemon stops. */
  "protocol_version_unsupported",
  /** The machine was deleted; the daemon's next registration makes a new machine. */
  "machine_deleted",
  /** The token that registered the machine was revoked. */
  "revoked",
  /** The machine token expired before it was refreshed. */
  "token_expired",
  /** Another connection of the same machine replaced this one. */
  "superseded",
  /** The server is stopping. */
  "server_shutdown",
  /** The daemon sent something the protocol does not allow (e.g. a hello for another machine). */
  "protocol_error"
])
export type CloseReason = typeof CloseReason.Type

/** Sent just before the server closes the socket. */
export const Close = Schema.Struct({ type: Schema.Literal("close"), reason: CloseReason, message: Schema.String })
export type Close = typeof Close.Type

export const ServerMessage = Schema.Union([Welcome, Request, Cancel, Ack, Token, HeartbeatAck, Close])
export type ServerMessage = typeof ServerMessage.Type

// ---- Daemon to server ----

export const Hello = Schema.Struct({
  type: Schema.Literal("hello"),
  /** The highest version the daemon speaks. */
  protocol_version: Version,
  machine_id: MachineId,
  daemon_version: Schema.String,
  platform: Schema.String,
  architecture: Schema.String,
  hostname: Schema.String,
  directories: Schema.Array(Schema.String),
  /** The operations and tools the daemon executes; strings, so that a newer daemon's list decodes. */
  operations: Schema.Array(Schema.String),
  tools: Schema.Array(Schema.String)
})
export type Hello = typeof Hello.Type

export const Heartbeat = Schema.Struct({ type: Schema.Literal("heartbeat") })

export const RefreshToken = Schema.Struct({ type: Schema.Literal("refresh_token") })

/** The outcome of one request: `output` follows `outputSchemaOf(operation)`. */
export const Outcome = Schema.Union([
  // Effect 3 took a missing `output` as undefined (an unknown value may be undefined); Effect 4
  // wants a required key present, so the key is optional here.
  Schema.Struct({ outcome: Schema.Literal("succeeded"), output: optional(Schema.Unknown) }),
  Schema.Struct({ outcome: Schema.Literal("failed"), error: OperationFailure })
])
export type Outcome = typeof Outcome.Type

export const Result = Outcome.mapMembers(
  Tuple.map(withEnvelope({ type: Schema.Literal("result"), request_id: RequestId }))
)
export type Result = typeof Result.Type

export const DaemonMessage = Schema.Union([Hello, Heartbeat, RefreshToken, Result])
export type DaemonMessage = typeof DaemonMessage.Type

/** Text frames, both ways. */
export const ServerMessageJson = Schema.fromJsonString(ServerMessage)
export const DaemonMessageJson = Schema.fromJsonString(DaemonMessage)
