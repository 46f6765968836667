/** The `machine_pool_grants` table. */
import { Context, Effect, Layer } from "effect"
import { MachinePoolGrant } from "../../domain/machines/MachinePools.ts"
import { MachinePoolGrantId, MachinePoolId } from "../../domain/shared/Ids.ts"
import { grantsRepository } from "../configuration/GrantsRepository.ts"

const make = grantsRepository({
    table: "machine_pool_grants",
    resourceColumn: "machine_pool_id",
    resourceId: MachinePoolId,
    grantId: MachinePoolGrantId,
    grant: MachinePoolGrant,
    label: "Machine pool"
  })

export class MachinePoolGrantsRepository extends Context.Service<MachinePoolGrantsRepository, Effect.Success<typeof make>>()("MachinePoolGrantsRepository") {
  static readonly layer = Layer.effect(this, make)
}
