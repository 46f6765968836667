/**
 * The sweep of pool machines (docs/machine-pools.md, "Provisioning"), run by PoolScheduler every
 * two seconds on every process: idle, unanswering (runtime protection), ended and never-registered
 * machines are marked `deleting`, then every `deleting` one is deleted (`PoolMachines.destroy`);
 * calls that waited past the admission wait for a pool machine fail.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { MachinePoolId } from "../../domain/shared/Ids.ts"
import { AppConfig } from "../../layers/AppConfig.ts"
import { MachinePoolsRepository } from "./MachinePoolsRepository.ts"
import { MachineRequestsRepository } from "./MachineRequestsRepository.ts"
import { MachineResults } from "./MachineResults.ts"
import { MachinesRepository } from "./MachinesRepository.ts"
import { PoolMachines, PROVISIONING_TIMEOUT_SECONDS } from "./PoolMachines.ts"
import { PoolProviders } from "./PoolProviders.ts"
import type { StoredMachine } from "./StoredMachine.ts"

const make = Effect.gen(function*() {
  const machines = yield* MachinesRepository
  const requests = yield* MachineRequestsRepository
  const pools = yield* MachinePoolsRepository
  const results = yield* MachineResults
  const poolProviders = yield* PoolProviders
  const poolMachines = yield* PoolMachines
  const config = yield* AppConfig

  /**
   * The pool's started machines `unconnected` (their daemon not connected) that its provider no
   * longer runs, marked `deleting` with what the provider tells of their end (an exit code, the
   * end of the daemon's output, a container out of memory). Only the machines of this process's
   * location: another location's are not in this process's list, though they run.
   */
  const markEndedInPool = (poolId: MachinePoolId, unconnected: ReadonlyArray<StoredMachine>) =>
    Effect.gen(function*() {
      const pool = yield* pools.findById(poolId)
      if (Option.isNone(pool)) return
      const judged = unconnected.filter(poolProviders.startedHere(pool.value))
      if (judged.length === 0) return
      const provider = poolProviders.providerOf(pool.value)
      const providerPool = yield* poolProviders.providerPoolOf(pool.value)
      const listed = new Map((yield* provider.list(providerPool)).map((machine) => [machine.machineId, machine]))
      for (const machine of judged) {
        const found = listed.get(machine.id)
        if (found?.running === true || machine.pool_state === null) continue
        const ending = found === undefined ? "its provider no longer has it" : yield* provider.ending(providerPool, machine.id, found.ref)
        const why = machine.pool_state === "provisioning"
          ? `its daemon ended before it registered: ${ending}`
          : `its daemon ended: ${ending}`
        const marked = yield* machines.setPoolState(machine.id, [machine.pool_state], "deleting", why)
        if (Option.isSome(marked)) yield* Effect.logWarning(`pool machine ${machine.id}: ${why}`)
      }
    }).pipe(
      Effect.catch((failure) => Effect.logWarning(`checking the machines of pool ${poolId} at its provider failed: ${failure.details}`))
    )

  /**
   * Started machines whose daemon is not connected and whose provider no longer runs them (a
   * daemon that exited before registering, crashed, or was killed for memory) are deleted now,
   * saying why, rather than after the registration timeout or never: their calls fail with it.
   * Whether the pool has runtime protection does not matter: that concerns a machine the provider
   * still runs.
   */
  const markEnded = Effect.gen(function*() {
    const byPool = new Map<MachinePoolId, Array<StoredMachine>>()
    for (const machine of yield* machines.startedUnconnected()) {
      if (machine.machine_pool_id === null) continue
      const same = byPool.get(machine.machine_pool_id)
      if (same === undefined) byPool.set(machine.machine_pool_id, [machine])
      else same.push(machine)
    }
    yield* Effect.forEach(byPool, ([poolId, unconnected]) => markEndedInPool(poolId, unconnected), { discard: true })
  })

  /** Marks idle, unanswering, ended and never-registered machines `deleting`, then deletes every `deleting` one. */
  const reap = Effect.gen(function*() {
    yield* machines.expire(config.poolMinuteSeconds)
    yield* markEnded
    yield* machines.abandonProvisioning(PROVISIONING_TIMEOUT_SECONDS)
    yield* Effect.forEach(yield* machines.inPoolState("deleting"), poolMachines.destroy, { concurrency: 4, discard: true })
  })

  /** Fails the calls that waited longer than the admission wait for a pool machine. */
  const refuseOverdue = Effect.gen(function*() {
    const wait = config.poolAdmissionWaitSeconds
    for (const request of yield* requests.unassignedOlderThan(wait)) {
      yield* results.complete(request.request_id, {
        outcome: "failed",
        error: {
          code: "managed_work_admission_denied",
          message: `Machine pool ${request.machine_pool_id} had no room for another machine of this agent within ${wait} s ` +
            "(its max_total_machines, CPU or memory limit, or the source's max_machines, was reached)"
        }
      })
    }
  })

  /**
   * The sweep of the pools (every two seconds): `reap`, then `refuseOverdue`, each only when the
   * read of `poolSweepWork` shows it has something to look at. Each of `reap`'s four statements
   * concerns provisioning, running or deleting pool machines only, and `refuseOverdue`'s read
   * calls waiting for a pool machine only; without any (no pool, or idle pools) that one read
   * stands for their five, so an idle server does not run them every sweep for nothing. A machine
   * or call that appears just after the read is swept by the next sweep, as one that appears just
   * after a sweep always was.
   */
  const sweep = Effect.gen(function*() {
    const work = yield* machines.poolSweepWork
    if (work.live) yield* reap
    if (work.waiting) yield* refuseOverdue
  })

  return { sweep } as const
})

export class PoolSweep extends Context.Service<PoolSweep, Effect.Success<typeof make>>()("PoolSweep") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MachinesRepository.layer,
      MachineRequestsRepository.layer,
      MachinePoolsRepository.layer,
      MachineResults.layer,
      PoolProviders.layer,
      PoolMachines.layer
    ])
  )
}
