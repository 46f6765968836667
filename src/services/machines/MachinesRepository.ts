/**
 * The `machines` table. A machine is `online` while a connection of its daemon is registered on
 * the row (`connection_id`) and its last heartbeat is recent (OFFLINE_AFTER_SECONDS): a server
 * process that dies leaves its connections behind, and they turn offline by themselves.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema, Struct } from "effect"
import { MachineDescriptor } from "../../domain/machines/Machine.ts"
import { MachineMetadata } from "../../domain/machines/MachineMetadata.ts"
import type { MachineStatus } from "../../domain/machines/Machines.ts"
import { MachineId, MachinePoolId, OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import { constructor } from "../shared/Construct.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { lockClause, type RowLock, uniqueOrDie } from "../shared/Sql.ts"

/** The daemon sends a heartbeat this often (the welcome tells it). */
export const HEARTBEAT_INTERVAL_SECONDS = 10
/** A connection without a heartbeat for this long is taken for gone. */
export const OFFLINE_AFTER_SECONDS = 3 * HEARTBEAT_INTERVAL_SECONDS

const ONLINE = `(connection_id IS NOT NULL AND last_seen_at > now() - interval '${OFFLINE_AFTER_SECONDS} seconds')`
const COLUMNS = `*, ${ONLINE} AS online`

/** A machine as stored. */
export const StoredMachine = Schema.Struct({
  ...Struct.omit(MachineDescriptor.fields, "status"),
  org_id: OrgId,
  owner_user_id: Schema.NullOr(UserId),
  machine_pool_id: Schema.NullOr(MachinePoolId),
  credential_id: Schema.String,
  directories: Schema.Array(Schema.String),
  connection_id: Schema.NullOr(Schema.String),
  operations: Schema.Array(Schema.String),
  tools: Schema.Array(Schema.String),
  online: Schema.Boolean
})
export type StoredMachine = typeof StoredMachine.Type

const makeDescriptor = constructor(MachineDescriptor, Schema.Struct(MachineDescriptor.fields))

export const toDescriptor = (machine: StoredMachine): MachineDescriptor =>
  makeDescriptor({
    ...Struct.pick(
      machine,
      "id",
      "name",
      "created_at",
      "updated_at",
      "hostname",
      "platform",
      "architecture",
      "daemon_version",
      "last_seen_at",
      "metadata"
    ),
    status: machine.online ? "online" : "offline"
  })

/** What a daemon reports when it registers. */
const Facts = Schema.Struct({
  name: Schema.String,
  hostname: Schema.String,
  platform: Schema.String,
  architecture: Schema.String,
  daemon_version: Schema.String,
  directories: Schema.Array(Schema.String),
  metadata: MachineMetadata,
  credential_id: Schema.String
})
export type MachineFacts = typeof Facts.Type

const NewMachine = Schema.Struct({
  ...Facts.fields,
  id: MachineId,
  org_id: OrgId,
  owner_user_id: Schema.NullOr(UserId)
})

/** Who sees a machine: the organization's machines, and the personal ones of `userId`. */
const Visible = Schema.Struct({ orgId: OrgId, userId: Schema.NullOr(UserId) })

export class MachinesRepository extends Effect.Service<MachinesRepository>()("MachinesRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const online = sql.unsafe(ONLINE)
    const visibleTo = (userId: string | null) => sql`(owner_user_id IS NULL OR owner_user_id = ${userId})`
    const json = (value: unknown) => JSON.stringify(value)

    const insert = SqlSchema.single({
      Request: NewMachine,
      Result: StoredMachine,
      execute: (machine) =>
        sql`INSERT INTO machines ${
          sql.insert({ ...machine, directories: json(machine.directories), metadata: json(machine.metadata) })
        } RETURNING ${columns}`
    })

    const reregister = SqlSchema.single({
      Request: Schema.Struct({ id: MachineId, facts: Facts }),
      Result: StoredMachine,
      execute: ({ facts, id }) => sql`
        UPDATE machines SET ${
        sql.update({ ...facts, directories: json(facts.directories), metadata: json(facts.metadata) })
      }, updated_at = now()
        WHERE id = ${id} RETURNING ${columns}`
    })

    const findVisible = SqlSchema.findOne({
      Request: Schema.Struct({ ...Visible.fields, id: MachineId, lock: Schema.Literal("none", "share", "update") }),
      Result: StoredMachine,
      execute: ({ id, lock, orgId, userId }) => sql`
        SELECT ${columns} FROM machines WHERE id = ${id} AND org_id = ${orgId} AND ${visibleTo(userId)} ${
        lockClause(sql, lock)
      }`
    })

    const findById = SqlSchema.findOne({
      Request: MachineId,
      Result: StoredMachine,
      execute: (id) => sql`SELECT ${columns} FROM machines WHERE id = ${id}`
    })

    const page = keysetQuery(sql, {
      filter: Schema.Struct({ ...Visible.fields, status: Schema.NullOr(Schema.Literal("online", "offline")) }),
      result: StoredMachine,
      select: ({ orgId, status, userId }) => sql`
        SELECT ${columns} FROM machines WHERE org_id = ${orgId} AND ${visibleTo(userId)}
        ${status === null ? sql`` : status === "online" ? sql`AND ${online}` : sql`AND NOT ${online}`}`
    })

    const update = SqlSchema.single({
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

    const connect = SqlSchema.findOne({
      Request: Schema.Struct({
        id: MachineId,
        connectionId: Schema.String,
        operations: Schema.Array(Schema.String),
        tools: Schema.Array(Schema.String)
      }),
      Result: Schema.Struct({ id: MachineId }),
      execute: ({ connectionId, id, operations, tools }) => sql`
        UPDATE machines SET connection_id = ${connectionId}, operations = ${json(operations)}, tools = ${json(tools)},
          last_seen_at = now()
        WHERE id = ${id} RETURNING id`
    })

    /** A heartbeat of the connection; none when the machine is gone or another connection took it over. */
    const heartbeat = SqlSchema.findOne({
      Request: Schema.Struct({ id: MachineId, connectionId: Schema.String }),
      Result: Schema.Struct({ credential_id: Schema.String }),
      execute: ({ connectionId, id }) => sql`
        UPDATE machines SET last_seen_at = now() WHERE id = ${id} AND connection_id = ${connectionId}
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

    /** The machines registered with this credential. */
    const byCredential = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: MachineId }),
      execute: (credentialId) => sql`SELECT id FROM machines WHERE credential_id = ${credentialId}`
    })

    return {
      /** Fails with UniqueViolation when the owner has a machine of that name. */
      insert: (machine: typeof NewMachine.Type) => uniqueOrDie(insert(machine)),
      /** Fails with UniqueViolation when the owner has another machine of that name. */
      reregister: (id: MachineId, facts: MachineFacts) => uniqueOrDie(reregister({ id, facts })),
      findVisible: (orgId: OrgId, userId: UserId | null, id: MachineId, lock: RowLock = "none") =>
        Effect.orDie(findVisible({ orgId, userId, id, lock })),
      findById: (id: MachineId) => Effect.orDie(findById(id)),
      page: (orgId: OrgId, userId: UserId | null, status: MachineStatus | null, keyset: Keyset) =>
        page({ orgId, userId, status }, keyset),
      /** Fails with UniqueViolation when the owner has another machine of that name. */
      update: (id: MachineId, name: string, metadata: MachineMetadata) => uniqueOrDie(update({ id, name, metadata })),
      remove: (id: MachineId) => Effect.orDie(remove(id)),
      /** Makes `connectionId` the machine's connection; whether the machine still exists. */
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
      byCredential: (credentialId: string) =>
        Effect.map(Effect.orDie(byCredential(credentialId)), (rows) => rows.map((row) => row.id))
    } as const
  })
}) {}
