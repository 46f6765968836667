/**
 * The `machine_pools` table. JSON settings (`provider_config`, the environments, the provider
 * options, `metadata`) are written with JSON.stringify and decoded with the domain's schemas.
 */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema, Struct } from "effect"
import { MachinePool, type PoolManagementKind, PoolSettings } from "../../domain/machines/MachinePools.ts"
import { MachinePoolId, OrgId, SecretId } from "../../domain/shared/Ids.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { lockClause, RowLock, uniqueOrDie } from "../shared/Sql.ts"

/** A pool as stored: the resource without its usage. */
export const StoredPool = Schema.Struct(Struct.omit(MachinePool.fields, ["usage"]))
export type StoredPool = typeof StoredPool.Type

const JSON_COLUMNS = [
  "provider_config",
  "default_machine_env",
  "default_machine_secret_env",
  "default_machine_provider_options",
  "metadata"
] as const

/** A new pool's row. */
const NewPool = Schema.Struct(Struct.omit(StoredPool.fields, ["created_at", "updated_at"]))

/** The settings as columns: JSON ones as text. */
const columnsOf = (settings: typeof PoolSettings.Encoded): Record<string, unknown> => {
  const row: Record<string, unknown> = { ...settings }
  for (const column of JSON_COLUMNS) row[column] = JSON.stringify(settings[column])
  return row
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const find = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgId: OrgId, poolId: MachinePoolId, lock: RowLock }),
    Result: StoredPool,
    execute: ({ lock, orgId, poolId }) =>
      sql`SELECT * FROM machine_pools WHERE id = ${poolId} AND org_id = ${orgId} ${lockClause(sql, lock)}`
  })

  const findById = SqlSchema.findOneOption({
    Request: Schema.Struct({ poolId: MachinePoolId, lock: RowLock }),
    Result: StoredPool,
    execute: ({ lock, poolId }) => sql`SELECT * FROM machine_pools WHERE id = ${poolId} ${lockClause(sql, lock)}`
  })

  const named = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgId: OrgId, name: Schema.String }),
    Result: StoredPool,
    execute: ({ name, orgId }) => sql`SELECT * FROM machine_pools WHERE org_id = ${orgId} AND name = ${name}`
  })

  const page = keysetQuery(sql, {
    filter: OrgId,
    result: StoredPool,
    select: (orgId) => sql`SELECT * FROM machine_pools WHERE org_id = ${orgId}`
  })

  const inOrg = SqlSchema.findAll({
    Request: Schema.Struct({ orgId: OrgId, poolIds: Schema.Array(MachinePoolId) }),
    Result: Schema.Struct({ id: MachinePoolId }),
    execute: ({ orgId, poolIds }) =>
      poolIds.length === 0
        ? Effect.succeed([])
        : sql`SELECT id FROM machine_pools WHERE org_id = ${orgId} AND ${sql.in("id", poolIds)}`
  })

  const usingSecrets = SqlSchema.findAll({
    Request: Schema.Array(SecretId),
    Result: Schema.Struct({ id: MachinePoolId, name: Schema.String, secret_id: SecretId }),
    execute: (secretIds) =>
      secretIds.length === 0 ? Effect.succeed([]) : sql`
        SELECT id, name, provider_auth_secret_id AS secret_id FROM machine_pools
        WHERE ${sql.in("provider_auth_secret_id", secretIds)}
        UNION
        SELECT p.id, p.name, e.value AS secret_id
        FROM machine_pools p, jsonb_each_text(p.default_machine_secret_env) e
        WHERE ${sql.in("e.value", secretIds)}`
  })

  const all = SqlSchema.findAll({
    Request: Schema.Void,
    Result: StoredPool,
    execute: () => sql`SELECT * FROM machine_pools ORDER BY id`
  })

  const clusterPools = SqlSchema.findAll({
    Request: Schema.Void,
    Result: StoredPool,
    execute: () => sql`SELECT * FROM machine_pools WHERE management_kind = 'cluster' ORDER BY id`
  })

  const insert = SqlSchema.findOne({
    Request: NewPool,
    Result: StoredPool,
    execute: (pool) => sql`INSERT INTO machine_pools ${sql.insert(columnsOf(pool))} RETURNING *`
  })

  const update = SqlSchema.findOne({
    Request: Schema.Struct({ poolId: MachinePoolId, settings: PoolSettings }),
    Result: StoredPool,
    execute: ({ poolId, settings }) =>
      sql`UPDATE machine_pools SET ${sql.update(columnsOf(settings))}, updated_at = now() WHERE id = ${poolId} RETURNING *`
  })

  const remove = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgId: OrgId, poolId: MachinePoolId }),
    Result: Schema.Struct({ id: MachinePoolId }),
    execute: ({ orgId, poolId }) => sql`DELETE FROM machine_pools WHERE id = ${poolId} AND org_id = ${orgId} RETURNING id`
  })

  return {
    /** Fails with UniqueViolation when the organization has a pool of that name. */
    insert: (pool: { id: MachinePoolId; org_id: OrgId; management_kind: PoolManagementKind; settings: PoolSettings }) =>
      uniqueOrDie(insert({ id: pool.id, org_id: pool.org_id, management_kind: pool.management_kind, ...pool.settings })),
    /** Fails with UniqueViolation when the new name is taken. */
    update: (poolId: MachinePoolId, settings: PoolSettings) => uniqueOrDie(update({ poolId, settings })),
    find: (orgId: OrgId, poolId: MachinePoolId, lock: RowLock = "none") => Effect.orDie(find({ orgId, poolId, lock })),
    /** A pool by id alone, for provisioning (its organization is the pool's own). */
    findById: (poolId: MachinePoolId, lock: RowLock = "none") => Effect.orDie(findById({ poolId, lock })),
    named: (orgId: OrgId, name: string) => Effect.orDie(named({ orgId, name })),
    page: (orgId: OrgId, keyset: Keyset) => page(orgId, keyset),
    /** Which of `poolIds` are pools of the organization. */
    inOrg: (orgId: OrgId, poolIds: ReadonlyArray<MachinePoolId>) =>
      Effect.map(Effect.orDie(inOrg({ orgId, poolIds })), (rows) => new Set(rows.map((row) => row.id))),
    /** The pools holding one of these secrets (as auth secret or in their secret environment). */
    usingSecrets: (secretIds: ReadonlyArray<SecretId>) => Effect.orDie(usingSecrets(secretIds)),
    /** Every pool of every organization (start-up reconciliation with the providers). */
    all: () => Effect.orDie(all(undefined)),
    /** Every pool the operator declared. */
    clusterPools: () => Effect.orDie(clusterPools(undefined)),
    /** Whether there was such a pool to delete. */
    remove: (orgId: OrgId, poolId: MachinePoolId) =>
      Effect.map(Effect.orDie(remove({ orgId, poolId })), (row) => row._tag === "Some")
  } as const
})

export class MachinePoolsRepository extends Context.Service<MachinePoolsRepository, Effect.Success<typeof make>>()("MachinePoolsRepository") {
  static readonly layer = Layer.effect(this, make)
}
