/**
 * The background work of machine pools, on every server process (docs/machine-pools.md): at
 * start-up, each pool reconciled with its provider; then admission of waiting calls, woken when a
 * call for a pool is stored on this process and every second for other processes' calls; and
 * every two seconds, deletion of idle, unanswering and never-registered machines and the failure
 * of calls that waited past the admission wait. Pools are admitted one at a time under their row
 * lock, so processes never admit the same call twice.
 */
import { Effect, Layer, PubSub, Schema } from "effect"
import { MachinePoolId } from "../../domain/shared/Ids.ts"
import { MachineHub } from "./MachineHub.ts"
import { MachineRequestsRepository } from "./MachineRequestsRepository.ts"
import { PoolMachines } from "./PoolMachines.ts"
import { PoolReconciliation } from "./PoolReconciliation.ts"
import { PoolSweep } from "./PoolSweep.ts"

const ADMIT_EVERY = "1 second"
const SWEEP_EVERY = "2 seconds"
const isPoolId = Schema.is(MachinePoolId)

const logFailure = (what: string) => Effect.catchCause((cause) => Effect.logWarning(`machine pools: ${what} failed`, cause))

export const PoolSchedulerLive = Layer.effectDiscard(Effect.gen(function*() {
  const poolMachines = yield* PoolMachines
  const poolSweep = yield* PoolSweep
  const reconciliation = yield* PoolReconciliation
  const requests = yield* MachineRequestsRepository
  const hub = yield* MachineHub
  const changes = yield* hub.subscribe

  yield* reconciliation.reconcile.pipe(logFailure("reconciling pools with their providers"), Effect.forkScoped)

  const admitWaiting = Effect.flatMap(requests.unassignedPools, (poolIds) =>
    Effect.forEach(poolIds, poolMachines.admit, { discard: true }))
  /** Until a pool is woken on this process (machines' wake-ups are skipped), or the interval passes. */
  const nextWake = Effect.raceFirst(
    Effect.asVoid(Effect.repeat(PubSub.take(changes), { until: isPoolId })),
    Effect.sleep(ADMIT_EVERY)
  )
  yield* admitWaiting.pipe(logFailure("admitting calls"), Effect.andThen(nextWake), Effect.forever, Effect.forkScoped)

  yield* poolSweep.sweep.pipe(
    logFailure("sweeping pool machines"),
    Effect.andThen(Effect.sleep(SWEEP_EVERY)),
    Effect.forever,
    Effect.forkScoped
  )
})).pipe(
  Layer.provide(
    Layer.mergeAll(PoolMachines.layer, PoolReconciliation.layer, PoolSweep.layer, MachineRequestsRepository.layer, MachineHub.layer)
  )
)
