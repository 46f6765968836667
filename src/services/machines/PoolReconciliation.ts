/**
 * At start-up (docs/machine-pools.md, "Crashes"), run by PoolScheduler on every process: each
 * pool's machines at its provider and in the table made to agree, at this process's location.
 */
import { Context, Effect, Layer, Option } from "effect"
import { MachinePoolsRepository, type StoredPool } from "./MachinePoolsRepository.ts"
import { MachinesRepository } from "./MachinesRepository.ts"
import { PoolMachines } from "./PoolMachines.ts"
import { PoolProviders } from "./PoolProviders.ts"

const make = Effect.gen(function*() {
  const machines = yield* MachinesRepository
  const pools = yield* MachinePoolsRepository
  const poolProviders = yield* PoolProviders
  const poolMachines = yield* PoolMachines

  /**
   * One pool's machines at its provider and in the table made to agree, at this process's
   * location: a provider machine the table does not hold (or holds as deleted) is stopped; a
   * running machine of this location the provider lost is deleted; a provisioning one it does not
   * run (the server stopped before starting it) is started again with a new registration token.
   * Another location's machines are its processes' (this provider does not list them).
   */
  const reconcilePool = (pool: StoredPool) =>
    Effect.gen(function*() {
      const provider = poolProviders.providerOf(pool)
      const providerPool = yield* poolProviders.providerPoolOf(pool)
      const here = poolProviders.startedHere(pool)
      // A pool its provider refuses now (the operator took the local key away from this process)
      // keeps no machine here.
      const refusal = provider.refusal(providerPool)
      if (Option.isSome(refusal)) {
        yield* poolMachines.markPoolDeleting(pool.id, `its provider refuses the pool: ${refusal.value}`, here)
      }
      const found = yield* provider.list(providerPool)
      const rows = new Map(
        (yield* machines.poolMachines(pool.id, ["provisioning", "running", "deleting", "deleted"])).map((row) => [row.id, row])
      )
      for (const machine of found) {
        const row = rows.get(machine.machineId)
        if (row === undefined || row.pool_state === "deleted") yield* provider.stop(providerPool, machine.machineId, machine.ref)
      }
      const alive = new Set(found.filter((machine) => machine.running).map((machine) => machine.machineId))
      for (const row of rows.values()) {
        if (alive.has(row.id) || !here(row)) continue
        if (row.pool_state === "running") {
          yield* machines.setPoolState(row.id, ["running"], "deleting", "its provider no longer runs it")
        } else if (row.pool_state === "provisioning" && row.agent_id !== null) {
          yield* poolMachines.startAgain(pool, row, row.agent_id)
        }
      }
    }).pipe(
      Effect.catch((failure) =>
        Effect.logWarning(`reconciling machine pool ${pool.id} with its provider failed: ${failure.details}`)
      )
    )

  /** Every pool reconciled with its provider. */
  const reconcile = Effect.flatMap(pools.all(), (all) => Effect.forEach(all, reconcilePool, { discard: true }))

  return { reconcile } as const
})

export class PoolReconciliation extends Context.Service<PoolReconciliation, Effect.Success<typeof make>>()("PoolReconciliation") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MachinesRepository.layer,
      MachinePoolsRepository.layer,
      PoolProviders.layer,
      PoolMachines.layer
    ])
  )
}
