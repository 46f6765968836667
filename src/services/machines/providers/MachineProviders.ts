/** The provider of each kind a pool may name (docs/machine-pools.md, "Providers"). */
import { Effect } from "effect"
import type { MachineProvider as ProviderKind } from "../../../domain/machines/MachinePools.ts"
import { DockerProvider } from "./DockerProvider.ts"
import { LocalProvider } from "./LocalProvider.ts"
import type { MachineProvider } from "./MachineProvider.ts"

export class MachineProviders extends Effect.Service<MachineProviders>()("MachineProviders", {
  effect: Effect.gen(function*() {
    const providers: Record<ProviderKind, MachineProvider> = { local: yield* LocalProvider, docker: yield* DockerProvider }
    return { of: (kind: ProviderKind) => providers[kind] } as const
  }),
  dependencies: [LocalProvider.Default, DockerProvider.Default]
}) {}
