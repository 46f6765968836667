/**
 * A pool's provider as this process uses it (docs/machine-pools.md, "Provisioning"): the pool
 * with its credential revealed, as the provider takes it, and the provider's location for this
 * process, which decides which of the pool's machines are this process's to judge and stop
 * (docs/scale-out.md, "Pool machines").
 */
import { Context, Effect, Layer, Redacted } from "effect"
import type { SecretId } from "../../domain/shared/Ids.ts"
import { Secrets } from "../configuration/Secrets.ts"
import type { StoredPool } from "./MachinePoolsRepository.ts"
import { MachineProviders } from "./providers/MachineProviders.ts"
import { ProviderFailed, type ProviderPool } from "./providers/MachineProvider.ts"
import type { StoredMachine } from "./StoredMachine.ts"

const make = Effect.gen(function*() {
  const secrets = yield* Secrets
  const providers = yield* MachineProviders

  /** The provider the pool names. */
  const providerOf = (pool: StoredPool) => providers.of(pool.provider)

  /** A secret's value for the provider; a secret gone meanwhile fails the provisioning saying so. */
  const revealed = (secretId: SecretId) =>
    secrets.reveal(secretId).pipe(
      Effect.map(Redacted.value),
      Effect.mapError(() => new ProviderFailed({ details: `the pool's secret ${secretId} no longer exists` }))
    )

  const providerPoolOf = (pool: StoredPool) =>
    Effect.map(revealed(pool.provider_auth_secret_id), (authSecret): ProviderPool => ({
      poolId: pool.id,
      providerConfig: pool.provider_config,
      authSecret
    }))

  /** This process's location of the pool's provider (MachineProvider's `location`). */
  const locationOf = (pool: StoredPool) => providerOf(pool).location(pool.provider_config)

  /**
   * Whether a machine of `pool` is this process's to judge at the provider: started at this
   * process's location, or before locations were recorded (every machine was everyone's then).
   */
  const startedHere = (pool: StoredPool) => {
    const location = locationOf(pool)
    return (machine: StoredMachine) => machine.provider_location === null || machine.provider_location === location
  }

  return { providerOf, revealed, providerPoolOf, locationOf, startedHere } as const
})

export class PoolProviders extends Context.Service<PoolProviders, Effect.Success<typeof make>>()("PoolProviders") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide([Secrets.layer, MachineProviders.layer]))
}
