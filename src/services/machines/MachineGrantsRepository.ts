/** The `machine_grants` table. */
import { Context, Effect, Layer } from "effect"
import { MachineGrant } from "../../domain/machines/Machines.ts"
import { MachineGrantId, MachineId } from "../../domain/shared/Ids.ts"
import { grantsRepository } from "../configuration/GrantsRepository.ts"

const make = grantsRepository({
  table: "machine_grants",
  resourceColumn: "machine_id",
  resourceId: MachineId,
  grantId: MachineGrantId,
  grant: MachineGrant,
  label: "Machine"
})

export class MachineGrantsRepository extends Context.Service<MachineGrantsRepository, Effect.Success<typeof make>>()("MachineGrantsRepository") {
  static readonly layer = Layer.effect(this, make)
}
