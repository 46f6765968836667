/**
 * The `machine_requests` table: the mailbox of requests to daemons (docs/daemon-protocol.md,
 * "Delivery rules"). A request is stored before it is sent, sent again after each welcome until
 * its result is stored, and completed by the first result (later copies change nothing). The
 * secret part of a command's environment is stored as secret ids, revealed only when sent.
 */
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { Operation, Outcome, RequestId } from "../../domain/machines/DaemonProtocol.ts"
import type { RequestDefaults } from "../../domain/machines/PoolAdmission.ts"
import { ToolCallState } from "../../domain/runtime/ToolCalls.ts"
import { AgentId, MachineId, MachinePoolId, SecretId, ToolCallId, TurnId } from "../../domain/shared/Ids.ts"
import { Timestamp } from "../../domain/shared/Timestamp.ts"
import { PipelinedStatements } from "../shared/PipelinedStatements.ts"
import { insertGuarded } from "../shared/Sql.ts"

export const StoredRequest = Schema.Struct({
  request_id: RequestId,
  /** Null while a request for a pool machine waits for the pool to admit it (docs/machine-pools.md). */
  machine_id: Schema.NullOr(MachineId),
  machine_pool_id: Schema.NullOr(MachinePoolId),
  operation: Operation,
  /** The variables whose values are secrets: their secrets' ids. */
  secret_env: Schema.Record(Schema.String, Schema.NullOr(SecretId)),
  agent_id: Schema.NullOr(AgentId),
  tool_call_id: Schema.NullOr(ToolCallId),
  state: Schema.Literals(["pending", "done"]),
  cancel_requested: Schema.Boolean,
  outcome: Schema.NullOr(Outcome),
  sent_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
})
export type StoredRequest = typeof StoredRequest.Type

const NewRequest = Schema.Struct(
  Struct.pick(StoredRequest.fields, ["request_id", "machine_id", "machine_pool_id", "operation", "secret_env", "agent_id", "tool_call_id"])
)
export type NewRequest = typeof NewRequest.Type

/** A request, with the turn, state and wait token of the tool call it was made for (null: none, or not found). */
const RequestWithCall = Schema.Struct({
  ...StoredRequest.fields,
  call_turn_id: Schema.NullOr(TurnId),
  call_state: Schema.NullOr(ToolCallState),
  call_deferred_token: Schema.NullOr(Schema.String)
})
export type RequestWithCall = typeof RequestWithCall.Type

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reads = yield* PipelinedStatements

  /** A new request's row: pending, its operation and secret environment as JSON. */
  const rowOf = (request: typeof NewRequest.Encoded) => ({
    ...request,
    operation: JSON.stringify(request.operation),
    secret_env: JSON.stringify(request.secret_env),
    state: "pending"
  })

  const encodeNewRequests = Schema.encodeEffect(Schema.Array(NewRequest))

  const insert = SqlSchema.void({
    Request: NewRequest,
    execute: (request) => sql`INSERT INTO machine_requests ${sql.insert(rowOf(request))}`
  })

  const pending = SqlSchema.findAll({
    Request: MachineId,
    Result: Schema.Struct({ request_id: RequestId, cancel_requested: Schema.Boolean }),
    execute: (machineId) => sql`
      SELECT request_id, cancel_requested FROM machine_requests
      WHERE machine_id = ${machineId} AND state = 'pending' ORDER BY request_id`
  })

  const findPending = SqlSchema.findAll({
    Request: Schema.Array(RequestId),
    Result: StoredRequest,
    execute: (ids) =>
      ids.length === 0 ? Effect.succeed([]) : sql`
        SELECT * FROM machine_requests WHERE ${sql.in("request_id", ids)} AND state = 'pending' ORDER BY request_id`
  })

  const markSent = SqlSchema.void({
    Request: Schema.Array(RequestId),
    execute: (ids) =>
      ids.length === 0 ? Effect.void : sql`
        UPDATE machine_requests SET sent_at = now() WHERE ${sql.in("request_id", ids)} AND sent_at IS NULL`
  })

  /** Answers the request's machine and pool only: its operation and outcome can be tens of MiB, and are known. */
  const complete = SqlSchema.findOneOption({
    Request: Schema.Struct({ requestId: Schema.String, outcome: Outcome }),
    Result: Schema.Struct({ machine_id: Schema.NullOr(MachineId), machine_pool_id: Schema.NullOr(MachinePoolId) }),
    execute: ({ outcome, requestId }) => sql`
      UPDATE machine_requests SET state = 'done', outcome = ${JSON.stringify(outcome)}, completed_at = now()
      WHERE request_id = ${requestId} AND state = 'pending' RETURNING machine_id, machine_pool_id`
  })

  const find = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: StoredRequest,
    execute: (requestId) => sql`SELECT * FROM machine_requests WHERE request_id = ${requestId}`
  })

  const findWithCall = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: RequestWithCall,
    execute: (requestId) =>
      reads.run((sql) => sql`
        SELECT machine_requests.*, tool_calls.turn_id AS call_turn_id, tool_calls.state AS call_state,
          tool_calls.deferred_token AS call_deferred_token
        FROM machine_requests
          LEFT JOIN tool_calls ON tool_calls.id = machine_requests.tool_call_id AND tool_calls.agent_id = machine_requests.agent_id
        WHERE machine_requests.request_id = ${requestId}`)
  })

  const encodeOutcome = Schema.encodeEffect(Outcome)

  const requestCancel = SqlSchema.findAll({
    Request: Schema.Array(ToolCallId),
    Result: Schema.Struct({ machine_id: Schema.NullOr(MachineId) }),
    execute: (ids) =>
      ids.length === 0 ? Effect.succeed([]) : sql`
        UPDATE machine_requests SET cancel_requested = true
        WHERE ${sql.in("tool_call_id", ids)} AND state = 'pending' RETURNING machine_id`
  })

  const runningOn = SqlSchema.findOne({
    Request: MachineId,
    Result: Schema.Struct({ running: Schema.Boolean }),
    execute: (machineId) => sql`
      SELECT EXISTS (
        SELECT 1 FROM machine_requests WHERE machine_id = ${machineId} AND state = 'pending' AND tool_call_id IS NOT NULL
      ) AS running`
  })

  /** Pending requests never sent, older than `seconds`, whose machine is not connected (or gone). */
  const unsentOlderThan = SqlSchema.findAll({
    Request: Schema.Struct({ seconds: Schema.Number, offlineAfter: Schema.Number }),
    Result: StoredRequest,
    execute: ({ offlineAfter, seconds }) => sql`
      SELECT r.* FROM machine_requests r
      WHERE r.state = 'pending' AND r.sent_at IS NULL AND r.machine_id IS NOT NULL
        AND r.created_at < now() - make_interval(secs => ${seconds})
        AND NOT EXISTS (
          SELECT 1 FROM machines m WHERE m.id = r.machine_id AND m.connection_id IS NOT NULL
            AND m.last_seen_at > now() - make_interval(secs => ${offlineAfter}))`
  })

  /**
   * Pending requests to a machine that is not there any more (deleted; a pool machine's row stays,
   * its requests failed as it goes).
   */
  const pendingOfDeletedMachines = SqlSchema.findAll({
    Request: Schema.Void,
    Result: StoredRequest,
    execute: () => sql`
      SELECT r.* FROM machine_requests r
      WHERE r.state = 'pending' AND r.machine_id IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM machines m WHERE m.id = r.machine_id)`
  })

  const pendingOf = SqlSchema.findAll({
    Request: MachineId,
    Result: StoredRequest,
    execute: (machineId) => sql`SELECT * FROM machine_requests WHERE machine_id = ${machineId} AND state = 'pending'`
  })

  const unassignedPools = SqlSchema.findAll({
    Request: Schema.Void,
    Result: Schema.Struct({ machine_pool_id: MachinePoolId }),
    execute: () => sql`
      SELECT DISTINCT machine_pool_id FROM machine_requests
      WHERE machine_id IS NULL AND state = 'pending' AND machine_pool_id IS NOT NULL`
  })

  const unassigned = SqlSchema.findAll({
    Request: MachinePoolId,
    Result: StoredRequest,
    execute: (poolId) => sql`
      SELECT * FROM machine_requests WHERE machine_pool_id = ${poolId} AND machine_id IS NULL AND state = 'pending'
      ORDER BY created_at, request_id`
  })

  const unassignedOlderThan = SqlSchema.findAll({
    Request: Schema.Number,
    Result: StoredRequest,
    execute: (seconds) => sql`
      SELECT * FROM machine_requests WHERE machine_id IS NULL AND state = 'pending' AND machine_pool_id IS NOT NULL
        AND created_at < now() - make_interval(secs => ${seconds})`
  })

  const assign = SqlSchema.void({
    Request: Schema.Struct({
      requestId: Schema.String,
      machineId: MachineId,
      cwd: Schema.NullOr(Schema.String),
      env: Schema.Record(Schema.String, Schema.String),
      secretEnv: Schema.Record(Schema.String, SecretId)
    }),
    execute: ({ cwd, env, machineId, requestId, secretEnv }) => sql`
      UPDATE machine_requests SET machine_id = ${machineId},
        operation = jsonb_set(
          CASE WHEN ${cwd}::text IS NOT NULL AND operation->>'cwd' IS NULL
            THEN jsonb_set(operation, '{cwd}', to_jsonb(${cwd}::text)) ELSE operation END,
          '{env}', ${JSON.stringify(env)}::jsonb || coalesce(operation->'env', '{}'::jsonb)),
        secret_env = ${JSON.stringify(secretEnv)}::jsonb || secret_env
      WHERE request_id = ${requestId} AND machine_id IS NULL`
  })

  const toolCallRunningInPool = SqlSchema.findOne({
    Request: MachinePoolId,
    Result: Schema.Struct({ running: Schema.Boolean }),
    execute: (poolId) => sql`
      SELECT EXISTS (
        SELECT 1 FROM machine_requests WHERE machine_pool_id = ${poolId} AND state = 'pending' AND tool_call_id IS NOT NULL
      ) AS running`
  })

  return {
    insert: (request: NewRequest) => Effect.orDie(insert(request)),
    /** The pools with requests waiting for a machine. */
    unassignedPools: Effect.map(Effect.orDie(unassignedPools()), (rows) => rows.map((row) => row.machine_pool_id)),
    /** The pool's requests waiting for a machine, oldest first. */
    unassigned: (poolId: MachinePoolId) => Effect.orDie(unassigned(poolId)),
    /** Requests that waited for a pool machine longer than `seconds`. */
    unassignedOlderThan: (seconds: number) => Effect.orDie(unassignedOlderThan(seconds)),
    /**
     * Gives a waiting request its machine, with the pool's defaults under the call's own: `cwd`
     * when the call has none, and environment variables (plain and secret ids) it does not set.
     */
    assign: (requestId: string, machineId: MachineId, defaults: RequestDefaults) =>
      Effect.orDie(assign({ requestId, machineId, ...defaults })),
    /** Whether a tool call waits for its result on a machine of the pool (or for one of its machines). */
    toolCallRunningInPool: (poolId: MachinePoolId) =>
      Effect.map(Effect.orDie(toolCallRunningInPool(poolId)), (row) => row.running),
    /** The machine's requests without a result, oldest first: their ids and whether a cancel was asked for (not the rows). */
    pending: (machineId: MachineId) => Effect.orDie(pending(machineId)),
    /** These requests, whole, of those still without a result, oldest first. */
    findPending: (requestIds: ReadonlyArray<string>) => Effect.orDie(findPending(requestIds)),
    /**
     * New requests, inserted by the statement of an append (AppendPrelude) only when its common
     * table expression `guard` holds a row (insertGuarded): its `new_machine_request_1`,
     * `new_machine_request_2`, ..., a request each.
     */
    insertBefore: (requests: ReadonlyArray<NewRequest>, guard: string): Effect.Effect<ReadonlyArray<Statement.Fragment>> =>
      Effect.map(
        Effect.orDie(encodeNewRequests(requests)),
        (encoded) =>
          encoded.map((request, index) =>
            sql`${sql(`new_machine_request_${index + 1}`)} AS (${insertGuarded(sql, "machine_requests", rowOf(request), guard)})`
          )
      ),
    markSent: (ids: ReadonlyArray<string>) => Effect.orDie(markSent(ids)),
    /** Stores the first result of a request; none when it had one already (or is unknown). */
    complete: (requestId: string, outcome: Outcome) => Effect.orDie(complete({ requestId, outcome })),
    /** The request with its tool call's turn, state and wait token, read without a lock (pipelined: PipelinedStatements). */
    findWithCall: (requestId: string) => Effect.orDie(findWithCall(requestId)),
    /**
     * The pending request completed with `outcome` by the statement of an append (AppendPrelude)
     * once `after`, one of its common table expressions, holds a row: its `completed_request`
     * holds the request's machine and pool then, no row else (the request had its result).
     */
    completeAfter: (after: string, requestId: string, outcome: Outcome): Effect.Effect<Statement.Fragment> =>
      Effect.map(Effect.orDie(encodeOutcome(outcome)), (encoded) =>
        sql`completed_request AS (
          UPDATE machine_requests SET state = 'done', outcome = ${JSON.stringify(encoded)}, completed_at = now()
          FROM ${sql(after)} WHERE machine_requests.request_id = ${requestId} AND machine_requests.state = 'pending'
          RETURNING machine_requests.machine_id, machine_requests.machine_pool_id
        )`),
    /** Asks the daemons to cancel these tool calls' requests; the machines to tell. */
    requestCancel: (toolCallIds: ReadonlyArray<ToolCallId>) =>
      Effect.map(
        Effect.orDie(requestCancel(toolCallIds)),
        (rows) => new Set(rows.flatMap((row) => row.machine_id === null ? [] : [row.machine_id]))
      ),
    /** Whether a tool call's request waits for its result on the machine. */
    toolCallRunningOn: (machineId: MachineId) => Effect.map(Effect.orDie(runningOn(machineId)), (row) => row.running),
    unsentOlderThan: (seconds: number, offlineAfter: number) => Effect.orDie(unsentOlderThan({ seconds, offlineAfter })),
    pendingOfDeletedMachines: Effect.orDie(pendingOfDeletedMachines()),
    pendingOf: (machineId: MachineId) => Effect.orDie(pendingOf(machineId)),
    findOutcome: (requestId: string) =>
      Effect.map(Effect.orDie(find(requestId)), Option.flatMap((row) => Option.fromNullishOr(row.outcome)))
  } as const
})

export class MachineRequestsRepository extends Context.Service<MachineRequestsRepository, Effect.Success<typeof make>>()("MachineRequestsRepository") {
  static readonly layer = Layer.effect(this, make)
}
