/**
 * The `machines` table. A machine is `online` while a connection of its daemon is registered on
 * the row (`connection_id`) and its last heartbeat is recent (OFFLINE_AFTER_SECONDS): a server
 * process that dies leaves its connections behind, and they turn offline by themselves. A pool
 * machine (`machine_pool_id`) also has a lifecycle (`pool_state`, docs/machine-pools.md); it is
 * `busy` while a request waits for its result on it.
 */
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { MachineMetadata } from "../../domain/machines/MachineMetadata.ts"
import { MachineStatus } from "../../domain/machines/Machines.ts"
import { MachineId, MachinePoolId, OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { lockClause, RowLock, uniqueOrDie } from "../shared/Sql.ts"
import {
  Facts,
  type MachineFacts,
  NewMachine,
  NewPoolMachine,
  PoolMachineState,
  StoredMachine
} from "./StoredMachine.ts"

/** The daemon sends a heartbeat this often (the welcome tells it). */
export const HEARTBEAT_INTERVAL_SECONDS = 10
/** A connection without a heartbeat for this long is taken for gone. */
export const OFFLINE_AFTER_SECONDS = 3 * HEARTBEAT_INTERVAL_SECONDS
/** The most operations and tools of a hello stored, and the longest name of one (docs/daemon-protocol.md, "Connection"). */
export const HELLO_NAMES_MAX = 64
export const HELLO_NAME_MAX_CHARS = 64

const ONLINE = `(connection_id IS NOT NULL AND last_seen_at > now() - interval '${OFFLINE_AFTER_SECONDS} seconds')`
/** No sign of the daemon (a heartbeat, a connection) for as long as `online` allows. */
const SILENT = `(last_seen_at < now() - interval '${OFFLINE_AFTER_SECONDS} seconds')`
const BUSY = `(machine_pool_id IS NOT NULL AND EXISTS (
  SELECT 1 FROM machine_requests r WHERE r.machine_id = machines.id AND r.state = 'pending'))`
const COLUMNS = `*, ${ONLINE} AS online, ${BUSY} AS busy`
/** A machine whose daemon may connect: not a pool machine being deleted or deleted. */
const CONNECTABLE = `(pool_state IS NULL OR pool_state IN ('provisioning', 'running'))`


/** Who sees a machine: the organization's machines, and the personal ones of `userId`. */
const Visible = Schema.Struct({ orgId: OrgId, userId: Schema.NullOr(UserId) })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.unsafe(COLUMNS)
  const online = sql.unsafe(ONLINE)
  const connectable = sql.unsafe(CONNECTABLE)
  const visibleTo = (userId: string | null) => sql`(owner_user_id IS NULL OR owner_user_id = ${userId})`
  const json = (value: unknown) => JSON.stringify(value)

  const insert = SqlSchema.findOne({
    Request: NewMachine,
    Result: StoredMachine,
    execute: (machine) =>
      sql`INSERT INTO machines ${
        sql.insert({ ...machine, directories: json(machine.directories), metadata: json(machine.metadata) })
      } RETURNING ${columns}`
  })

  const reregister = SqlSchema.findOne({
    Request: Schema.Struct({ id: MachineId, facts: Facts }),
    Result: StoredMachine,
    execute: ({ facts, id }) => sql`
      UPDATE machines SET ${
      sql.update({ ...facts, directories: json(facts.directories), metadata: json(facts.metadata) })
    }, updated_at = now()
      WHERE id = ${id} RETURNING ${columns}`
  })

  const findVisible = SqlSchema.findOneOption({
    Request: Schema.Struct({ ...Visible.fields, id: MachineId, lock: RowLock }),
    Result: StoredMachine,
    execute: ({ id, lock, orgId, userId }) => sql`
      SELECT ${columns} FROM machines WHERE id = ${id} AND org_id = ${orgId} AND ${visibleTo(userId)} ${
      lockClause(sql, lock)
    }`
  })

  const findById = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: MachineId, lock: RowLock }),
    Result: StoredMachine,
    execute: ({ id, lock }) => sql`SELECT ${columns} FROM machines WHERE id = ${id} ${lockClause(sql, lock)}`
  })

  const busy = sql.unsafe(BUSY)
  /** The machines showing `status` (StoredMachine's `statusOf`); without one, all but the deleted. */
  const withStatus = (status: MachineStatus | null) => {
    const daemonRun = sql`(pool_state IS NULL OR pool_state = 'running')`
    switch (status) {
      case null:
        return sql`pool_state IS DISTINCT FROM 'deleted'`
      case "online":
        return sql`${online} AND (pool_state IS NULL OR (pool_state = 'running' AND ${busy}))`
      case "idle":
        return sql`pool_state = 'running' AND ${online} AND NOT ${busy}`
      case "offline":
        return sql`${daemonRun} AND NOT ${online}`
      default:
        return sql`pool_state = ${status}`
    }
  }

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ ...Visible.fields, status: Schema.NullOr(MachineStatus) }),
    result: StoredMachine,
    select: ({ orgId, status, userId }) => sql`
      SELECT ${columns} FROM machines WHERE org_id = ${orgId} AND ${visibleTo(userId)} AND ${withStatus(status)}`
  })

  const update = SqlSchema.findOne({
    Request: Schema.Struct({ id: MachineId, name: Schema.String, metadata: MachineMetadata }),
    Result: StoredMachine,
    execute: ({ id, metadata, name }) => sql`
      UPDATE machines SET name = ${name}, metadata = ${json(metadata)}, updated_at = now()
      WHERE id = ${id} RETURNING ${columns}`
  })

  const remove = SqlSchema.void({
    Request: MachineId,
    execute: (id) => sql`DELETE FROM machines WHERE id = ${id}`
  })

  /**
   * The hello's operations or tools as stored: the first HELLO_NAMES_MAX names of at most
   * HELLO_NAME_MAX_CHARS characters (a longer one names nothing this server sends). Bounded so that
   * a daemon's hello cannot make its machine's row too large to read back.
   */
  const helloNames = (names: ReadonlyArray<string>) =>
    names.filter((name) => name.length <= HELLO_NAME_MAX_CHARS).slice(0, HELLO_NAMES_MAX)

  const connect = SqlSchema.findOneOption({
    Request: Schema.Struct({
      id: MachineId,
      connectionId: Schema.String,
      operations: Schema.Array(Schema.String),
      tools: Schema.Array(Schema.String)
    }),
    Result: Schema.Struct({ id: MachineId }),
    execute: ({ connectionId, id, operations, tools }) => sql`
      UPDATE machines SET connection_id = ${connectionId}, operations = ${json(helloNames(operations))},
        tools = ${json(helloNames(tools))},
        last_seen_at = now()
      WHERE id = ${id} AND ${connectable} RETURNING id`
  })

  /** A heartbeat of the connection; none when the machine is gone or another connection took it over. */
  const heartbeat = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: MachineId, connectionId: Schema.String }),
    Result: Schema.Struct({ credential_id: Schema.String }),
    execute: ({ connectionId, id }) => sql`
      UPDATE machines SET last_seen_at = now() WHERE id = ${id} AND connection_id = ${connectionId} AND ${connectable}
      RETURNING credential_id`
  })

  const disconnect = SqlSchema.void({
    Request: Schema.Struct({ id: MachineId, connectionId: Schema.String }),
    execute: ({ connectionId, id }) => sql`
      UPDATE machines SET connection_id = NULL WHERE id = ${id} AND connection_id = ${connectionId}`
  })

  /** Of these machine ids or names, the machines the project may use: the caller's own, or the organization's granted to it. */
  const usableAmong = SqlSchema.findAll({
    Request: Schema.Struct({ orgId: OrgId, projectId: ProjectId, userId: Schema.NullOr(UserId), refs: Schema.Array(Schema.String) }),
    Result: Schema.Struct({ id: MachineId, name: Schema.String, personal: Schema.Boolean }),
    execute: ({ orgId, projectId, refs, userId }) =>
      refs.length === 0 ? Effect.succeed([]) : sql`
        SELECT m.id, m.name, m.owner_user_id IS NOT NULL AS personal FROM machines m
        WHERE m.org_id = ${orgId} AND (${sql.in("m.id", refs)} OR ${sql.in("m.name", refs)}) AND (
          (m.owner_user_id IS NOT NULL AND m.owner_user_id = ${userId}) OR
          (m.owner_user_id IS NULL AND EXISTS (
            SELECT 1 FROM machine_grants g WHERE g.machine_id = m.id AND g.target_project_id = ${projectId})))`
  })

  const insertPoolMachine = SqlSchema.findOne({
    Request: NewPoolMachine,
    Result: StoredMachine,
    execute: (machine) =>
      sql`INSERT INTO machines ${
        sql.insert({
          ...machine,
          owner_user_id: null,
          credential_id: machine.machine_pool_id,
          hostname: "",
          platform: "",
          architecture: "",
          daemon_version: "",
          pool_state: "provisioning",
          state_changed_at: new Date(),
          last_used_at: new Date()
        })
      } RETURNING ${columns}`
  })

  /** The daemon of a pool machine registers (again, after a lost connection) with its machine's token. */
  const registerPoolMachine = SqlSchema.findOneOption({
    Request: Schema.Struct({ tokenHash: Schema.String, facts: Facts }),
    Result: StoredMachine,
    execute: ({ facts, tokenHash }) => sql`
      UPDATE machines SET hostname = ${facts.hostname}, platform = ${facts.platform},
        architecture = ${facts.architecture}, daemon_version = ${facts.daemon_version},
        directories = ${json(facts.directories)}, metadata = ${json(facts.metadata)},
        state_changed_at = CASE WHEN pool_state = 'provisioning' THEN now() ELSE state_changed_at END,
        last_used_at = CASE WHEN pool_state = 'provisioning' THEN now() ELSE last_used_at END,
        pool_state = 'running', updated_at = now()
      WHERE registration_token_hash = ${tokenHash} AND pool_state IN ('provisioning', 'running') RETURNING ${columns}`
  })

  const byRegistrationToken = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: StoredMachine,
    execute: (tokenHash) => sql`
      SELECT ${columns} FROM machines WHERE registration_token_hash = ${tokenHash} AND pool_state IN ('provisioning', 'running')`
  })

  const poolMachines = SqlSchema.findAll({
    Request: Schema.Struct({ poolId: MachinePoolId, states: Schema.Array(PoolMachineState) }),
    Result: StoredMachine,
    execute: ({ poolId, states }) => sql`
      SELECT ${columns} FROM machines WHERE machine_pool_id = ${poolId} AND ${sql.in("pool_state", states)} ORDER BY id`
  })

  const poolSweepWork = SqlSchema.findOne({
    Request: Schema.Void,
    Result: Schema.Struct({ live: Schema.Boolean, waiting: Schema.Boolean }),
    execute: () => sql`
      SELECT
        EXISTS (SELECT 1 FROM machines WHERE pool_state IN ('provisioning', 'running', 'deleting')) AS live,
        EXISTS (
          SELECT 1 FROM machine_requests WHERE machine_id IS NULL AND state = 'pending' AND machine_pool_id IS NOT NULL
        ) AS waiting`
  })

  const inPoolState = SqlSchema.findAll({
    Request: PoolMachineState,
    Result: StoredMachine,
    execute: (state) => sql`SELECT ${columns} FROM machines WHERE pool_state = ${state} ORDER BY id`
  })

  const usage = SqlSchema.findAll({
    Request: Schema.Array(MachinePoolId),
    Result: Schema.Struct({ machine_pool_id: MachinePoolId, machines: Schema.Int, cpu: Schema.Int, memory_mb: Schema.Int }),
    execute: (poolIds) =>
      poolIds.length === 0 ? Effect.succeed([]) : sql`
        SELECT machine_pool_id, count(*)::int AS machines, coalesce(sum(cpu), 0)::int AS cpu,
          coalesce(sum(memory_mb), 0)::int AS memory_mb
        FROM machines WHERE ${sql.in("machine_pool_id", poolIds)} AND pool_state IN ('provisioning', 'running', 'deleting')
        GROUP BY machine_pool_id`
  })

  const setPoolState = SqlSchema.findOneOption({
    Request: Schema.Struct({
      id: MachineId,
      from: Schema.Array(PoolMachineState),
      to: PoolMachineState,
      failure: Schema.NullOr(Schema.String)
    }),
    Result: StoredMachine,
    execute: ({ failure, from, id, to }) => sql`
      UPDATE machines SET pool_state = ${to}, state_changed_at = now(), updated_at = now(),
        failure = coalesce(${failure}, failure), registration_token_hash = NULL
      WHERE id = ${id} AND ${sql.in("pool_state", from)} RETURNING ${columns}`
  })

  const settleDeleting = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: MachineId, seconds: Schema.Number }),
    Result: StoredMachine,
    execute: ({ id, seconds }) => sql`
      UPDATE machines SET pool_state = 'deleted', state_changed_at = now(), updated_at = now()
      WHERE id = ${id} AND pool_state = 'deleting' AND state_changed_at < now() - make_interval(secs => ${seconds})
      RETURNING ${columns}`
  })

  const renewRegistrationToken = SqlSchema.void({
    Request: Schema.Struct({ id: MachineId, tokenHash: Schema.String }),
    execute: ({ id, tokenHash }) => sql`
      UPDATE machines SET registration_token_hash = ${tokenHash}, state_changed_at = now(), provider_ref = NULL
      WHERE id = ${id} AND pool_state = 'provisioning'`
  })

  const startedUnconnected = SqlSchema.findAll({
    Request: Schema.Void,
    Result: StoredMachine,
    execute: () => sql`
      SELECT ${columns} FROM machines
      WHERE pool_state IN ('provisioning', 'running') AND provider_ref IS NOT NULL AND NOT ${online} ORDER BY id`
  })

  const setProviderRef = SqlSchema.void({
    Request: Schema.Struct({ id: MachineId, ref: Schema.String }),
    execute: ({ id, ref }) => sql`UPDATE machines SET provider_ref = ${ref} WHERE id = ${id}`
  })

  const touch = SqlSchema.void({
    Request: MachineId,
    execute: (id) => sql`UPDATE machines SET last_used_at = now() WHERE id = ${id}`
  })

  /**
   * Running pool machines to delete now, marked `deleting`: idle (no request waiting, unused for
   * their idle minutes, a minute being `minuteSeconds`) or, in a pool with runtime protection,
   * whose daemon stopped answering: not connected, and no sign of it for OFFLINE_AFTER_SECONDS
   * (a daemon reconnecting after a blip or a server restart is not deleted).
   */
  const expire = SqlSchema.findAll({
    Request: Schema.Struct({ minuteSeconds: Schema.Number }),
    Result: StoredMachine,
    execute: ({ minuteSeconds }) => sql`
      UPDATE machines SET pool_state = 'deleting', state_changed_at = now(), updated_at = now(),
        failure = CASE WHEN ${online} THEN 'idle for ' || delete_after_idle_minutes || ' minutes'
          ELSE 'its daemon stopped answering (runtime protection)' END
      WHERE pool_state = 'running' AND (
        (delete_after_idle_minutes IS NOT NULL AND NOT ${sql.unsafe(BUSY)}
          AND last_used_at < now() - make_interval(secs => delete_after_idle_minutes * ${minuteSeconds}))
        OR (NOT ${online} AND ${sql.unsafe(SILENT)} AND EXISTS (
          SELECT 1 FROM machine_pools p WHERE p.id = machines.machine_pool_id AND p.runtime_protection_enabled)))
      RETURNING ${columns}`
  })

  /** Pool machines whose daemon never registered within `seconds`, marked `deleting`. */
  const abandonProvisioning = SqlSchema.findAll({
    Request: Schema.Number,
    Result: StoredMachine,
    execute: (seconds) => sql`
      UPDATE machines SET pool_state = 'deleting', state_changed_at = now(), updated_at = now(),
        registration_token_hash = NULL,
        failure = 'its daemon did not register within ' || ${seconds} || ' seconds of provisioning'
      WHERE pool_state = 'provisioning' AND state_changed_at < now() - make_interval(secs => ${seconds})
      RETURNING ${columns}`
  })

  return {
    /** Fails with UniqueViolation when the owner has a machine of that name. */
    insert: (machine: typeof NewMachine.Type) => uniqueOrDie(insert(machine)),
    /** Fails with UniqueViolation when the owner has another machine of that name. */
    reregister: (id: MachineId, facts: MachineFacts) => uniqueOrDie(reregister({ id, facts })),
    findVisible: (orgId: OrgId, userId: UserId | null, id: MachineId, lock: RowLock = "none") =>
      Effect.orDie(findVisible({ orgId, userId, id, lock })),
    findById: (id: MachineId, lock: RowLock = "none") => Effect.orDie(findById({ id, lock })),
    page: (orgId: OrgId, userId: UserId | null, status: MachineStatus | null, keyset: Keyset) =>
      page({ orgId, userId, status }, keyset),
    /** Fails with UniqueViolation when the owner has another machine of that name. */
    update: (id: MachineId, name: string, metadata: MachineMetadata) => uniqueOrDie(update({ id, name, metadata })),
    remove: (id: MachineId) => Effect.orDie(remove(id)),
    /** Makes `connectionId` the machine's connection (its operations and tools bounded: helloNames); whether the machine still exists. */
    connect: (id: MachineId, connectionId: string, operations: ReadonlyArray<string>, tools: ReadonlyArray<string>) =>
      Effect.map(Effect.orDie(connect({ id, connectionId, operations, tools })), Option.isSome),
    heartbeat: (id: MachineId, connectionId: string) => Effect.orDie(heartbeat({ id, connectionId })),
    disconnect: (id: MachineId, connectionId: string) => Effect.orDie(disconnect({ id, connectionId })),
    /**
     * What each reference (a machine id, or a name) resolves to among the machines the project may
     * use; a name of a personal machine of the caller wins over an organization machine's.
     */
    usableAmong: (orgId: OrgId, projectId: ProjectId, userId: UserId | null, refs: ReadonlyArray<string>) =>
      Effect.map(Effect.orDie(usableAmong({ orgId, projectId, userId, refs })), (rows) => {
        const resolved = new Map<string, MachineId>()
        for (const row of rows) resolved.set(row.id, row.id)
        for (const row of [...rows].sort((a, b) => Number(a.personal) - Number(b.personal))) {
          if (refs.includes(row.name)) resolved.set(row.name, row.id)
        }
        return resolved
      }),
    /**
     * A new pool machine, `provisioning`, waiting for its daemon to register with the token whose
     * hash is given (the machine's own: it registers this machine only, until it is deleted).
     */
    insertPoolMachine: (machine: typeof NewPoolMachine.Type) => Effect.orDie(insertPoolMachine(machine)),
    /** The live pool machine whose registration token has this hash. */
    byRegistrationToken: (tokenHash: string) => Effect.orDie(byRegistrationToken(tokenHash)),
    registerPoolMachine: (tokenHash: string, facts: MachineFacts) => Effect.orDie(registerPoolMachine({ tokenHash, facts })),
    /** The pool's machines in these states, oldest first. */
    poolMachines: (poolId: MachinePoolId, states: ReadonlyArray<PoolMachineState>) =>
      Effect.orDie(poolMachines({ poolId, states })),
    inPoolState: (state: PoolMachineState) => Effect.orDie(inPoolState(state)),
    /**
     * What the pools' sweep has to look at, in one read: whether any pool machine is
     * provisioning, running or deleting (`live`), and whether any call waits for a pool machine
     * (`waiting`).
     */
    poolSweepWork: Effect.orDie(poolSweepWork(undefined)),
    /** The machines, CPUs and memory the pools' machines hold (deleting ones still count). */
    usage: (poolIds: ReadonlyArray<MachinePoolId>) => Effect.orDie(usage(poolIds)),
    /** Moves a pool machine from one of `from` to `to`; none when it was in another state. */
    setPoolState: (id: MachineId, from: ReadonlyArray<PoolMachineState>, to: PoolMachineState, failure: string | null = null) =>
      Effect.orDie(setPoolState({ id, from, to, failure })),
    /**
     * A pool machine `deleting` for over `seconds`, marked `deleted`; none when it is not (or not
     * for that long).
     */
    settleDeleting: (id: MachineId, seconds: number) => Effect.orDie(settleDeleting({ id, seconds })),
    setProviderRef: (id: MachineId, ref: string) => Effect.orDie(setProviderRef({ id, ref })),
    /**
     * A provisioning machine started again gets a new registration token (and a new provisioning
     * time); its provider handle is the new start's, once it has one.
     */
    renewRegistrationToken: (id: MachineId, tokenHash: string) => Effect.orDie(renewRegistrationToken({ id, tokenHash })),
    /**
     * The provisioning and running pool machines their provider has started (they have a handle)
     * whose daemon is not connected: not registered yet, or gone.
     */
    startedUnconnected: () => Effect.orDie(startedUnconnected(undefined)),
    /** A pool machine was used now (its idle time starts again). */
    touch: (id: MachineId) => Effect.orDie(touch(id)),
    /**
     * `touch` by the statement of an append, for the request that `after` (one of its common
     * table expressions, with the request's `machine_id` and `machine_pool_id`) holds, when that
     * request went to a pool machine: its `touched_machine`.
     */
    touchAfter: (after: string): Statement.Fragment =>
      sql`touched_machine AS (
        UPDATE machines SET last_used_at = now() FROM ${sql(after)}
        WHERE machines.id = ${sql(after)}.machine_id AND ${sql(after)}.machine_pool_id IS NOT NULL
      )`,
    expire: (minuteSeconds: number) => Effect.orDie(expire({ minuteSeconds })),
    abandonProvisioning: (seconds: number) => Effect.orDie(abandonProvisioning(seconds))
  } as const
})

export class MachinesRepository extends Context.Service<MachinesRepository, Effect.Success<typeof make>>()("MachinesRepository") {
  static readonly layer = Layer.effect(this, make)
}
