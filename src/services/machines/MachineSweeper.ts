/**
 * A request to a machine that is offline is not sent; when its machine has not come back after
 * AGENT_PLATFORM_MACHINE_OFFLINE_WAIT_SECONDS (default 60), it fails with a result that says so
 * (a tool call completes with it and its turn goes on). A request to a machine that was deleted
 * fails at the next sweep, as no daemon of it can come back (its daemon registers a new machine),
 * `upstream_unavailable` as a call to a deleted pool's. Every process sweeps; the first result
 * stored wins, so two sweeps of one request change nothing.
 */
import { Effect, Layer } from "effect"
import { AppConfig } from "../../layers/AppConfig.ts"
import { MachineRequestsRepository } from "./MachineRequestsRepository.ts"
import { MachineResults } from "./MachineResults.ts"
import { OFFLINE_AFTER_SECONDS } from "./MachinesRepository.ts"

const SWEEP_EVERY = "2 seconds"

export const MachineSweeperLive = Layer.effectDiscard(Effect.gen(function*() {
  const requests = yield* MachineRequestsRepository
  const results = yield* MachineResults
  const wait = (yield* AppConfig).machineOfflineWaitSeconds
  const sweep = Effect.gen(function*() {
    for (const request of yield* requests.pendingOfDeletedMachines) {
      yield* results.complete(request.request_id, {
        outcome: "failed",
        error: { code: "upstream_unavailable", message: `Machine ${request.machine_id} was deleted` }
      })
    }
    const stale = yield* requests.unsentOlderThan(wait, OFFLINE_AFTER_SECONDS)
    for (const request of stale) {
      yield* results.complete(request.request_id, {
        outcome: "failed",
        error: {
          code: "cancelled",
          message: `Machine ${request.machine_id} is offline: no daemon of it connected within ${wait} s, so this did not run`
        }
      })
    }
  })
  yield* sweep.pipe(
    Effect.catchCause((cause) => Effect.logWarning("sweeping requests of offline machines failed", cause)),
    Effect.andThen(Effect.sleep(SWEEP_EVERY)),
    Effect.forever,
    Effect.forkScoped
  )
})).pipe(Layer.provide(Layer.mergeAll(MachineRequestsRepository.layer, MachineResults.layer)))
