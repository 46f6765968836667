/**
 * The operator's machine pools (`management_kind: cluster`, docs/machine-pools.md, "Cluster
 * pools"), declared in AGENT_PLATFORM_CLUSTER_POOLS_FILE and installed at start-up
 * (layers/ClusterPools.ts reads the file).
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { type ClusterPoolsFile, settingsOf, settingsText } from "../../domain/machines/MachinePools.ts"
import { MachinePoolId } from "../../domain/shared/Ids.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { Transactions } from "../shared/Transactions.ts"
import { MachinePoolsRepository, type StoredPool } from "./MachinePoolsRepository.ts"
import { PoolMachines } from "./PoolMachines.ts"
import { PoolSettingsValidation } from "./PoolSettingsValidation.ts"

/** The operator's cluster pools file declares a pool the server cannot install. */
export class ClusterPoolsRefused extends Schema.TaggedError<ClusterPoolsRefused>()("ClusterPoolsRefused", {
  details: Schema.String
}) {
  override get message() {
    return `AGENT_PLATFORM_CLUSTER_POOLS_FILE: ${this.details}`
  }
}

/** What installing the operator's pools did. */
export interface ClusterPoolsInstalled {
  readonly installed: number
  readonly updated: number
  readonly unchanged: number
  readonly removed: number
  /** `org_id/name` of declared pools whose name a tenant pool has taken. */
  readonly skipped: ReadonlyArray<string>
}

const make = Effect.gen(function*() {
  const pools = yield* MachinePoolsRepository
  const poolMachines = yield* PoolMachines
  const validation = yield* PoolSettingsValidation
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions

  /**
   * Installs the operator's pools (start-up): each declared pool is made or brought up to date
   * as a `cluster` pool; a cluster pool no longer declared is deleted, its machines stopped
   * first; a declared name taken by a tenant pool is skipped (and reported). All or nothing: one
   * invalid entry refuses the file.
   */
  const installClusterPools = (file: ClusterPoolsFile) =>
    Effect.flatMap(install(file), ({ dropped, result }) => Effect.as(Effect.forEach(dropped, retire, { discard: true }), result))

  /**
   * Stops a dropped pool's machines at its provider, then deletes it; while one of them cannot
   * be stopped, the pool stays (the next start-up tries again).
   */
  const retire = (pool: StoredPool) =>
    Effect.gen(function*() {
      yield* transaction(poolMachines.markPoolDeleting(pool.id, "its cluster pool was dropped by the operator"))
      const left = yield* poolMachines.destroyPoolDeleting(pool.id)
      if (left > 0) {
        return yield* Effect.logWarning(
          `cluster pool ${pool.org_id}/${pool.name} was dropped from the file, but ${left} of its machines could ` +
            "not be stopped at the provider; the pool stays until they are (the next start-up tries again)"
        )
      }
      yield* pools.remove(pool.org_id, pool.id)
    })

  /** The declared pools made or updated, in one transaction; the cluster pools no longer declared. */
  const install = (file: ClusterPoolsFile) =>
    transaction(Effect.gen(function*() {
      const declared = new Set<string>()
      let installed = 0, updated = 0, unchanged = 0
      const skipped: Array<string> = []
      for (const [index, entry] of file.pools.entries()) {
        const { org_id: orgId, ...body } = entry
        const key = `${orgId}/${body.name}`
        if (declared.has(key)) {
          return yield* Effect.fail(new ClusterPoolsRefused({ details: `pools[${index}]: ${key} is declared twice` }))
        }
        declared.add(key)
        const settings = settingsOf(body)
        yield* validation.validate(orgId, settings, true).pipe(
          Effect.mapError((invalid) => new ClusterPoolsRefused({ details: `pools[${index}] (${key}): ${invalid.error}` }))
        )
        const existing = yield* pools.named(orgId, settings.name)
        if (Option.isNone(existing)) {
          const id = yield* ids.make(MachinePoolId)
          yield* Effect.orDie(pools.insert({ id, org_id: orgId, management_kind: "cluster", settings }))
          installed++
        } else if (existing.value.management_kind === "tenant") {
          skipped.push(key)
        } else if (settingsText(existing.value) === settingsText(settings)) {
          unchanged++
        } else {
          yield* Effect.orDie(pools.update(existing.value.id, settings))
          updated++
        }
      }
      const dropped = (yield* pools.clusterPools()).filter((pool) => !declared.has(`${pool.org_id}/${pool.name}`))
      const result: ClusterPoolsInstalled = { installed, updated, unchanged, removed: dropped.length, skipped }
      return { dropped, result }
    }))

  return { installClusterPools } as const
})

export class ClusterPools extends Context.Service<ClusterPools, Effect.Success<typeof make>>()("ClusterPools") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MachinePoolsRepository.layer,
      PoolMachines.layer,
      PoolSettingsValidation.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
