/** The provider of each kind a pool may name (docs/machine-pools.md, "Providers"). */
import { Context, Effect, Layer } from "effect"
import type { MachineProvider as ProviderKind } from "../../../domain/machines/MachinePools.ts"
import { DockerProvider } from "./DockerProvider.ts"
import { LocalProvider } from "./LocalProvider.ts"
import type { MachineProvider } from "./MachineProvider.ts"

const make = Effect.gen(function*() {
  const providers: Record<ProviderKind, MachineProvider> = { local: yield* LocalProvider, docker: yield* DockerProvider }
  return { of: (kind: ProviderKind) => providers[kind] } as const
})

export class MachineProviders extends Context.Service<MachineProviders, Effect.Success<typeof make>>()("MachineProviders") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      LocalProvider.layer,
      DockerProvider.layer
    ])
  )
}
