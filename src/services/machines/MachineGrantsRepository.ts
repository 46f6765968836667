/** The `machine_grants` table. */
import { Effect } from "effect"
import { MachineGrant } from "../../domain/machines/Machines.ts"
import { MachineGrantId, MachineId } from "../../domain/shared/Ids.ts"
import { grantsRepository } from "../configuration/GrantsRepository.ts"

export class MachineGrantsRepository extends Effect.Service<MachineGrantsRepository>()("MachineGrantsRepository", {
  effect: grantsRepository({
    table: "machine_grants",
    resourceColumn: "machine_id",
    resourceId: MachineId,
    grantId: MachineGrantId,
    grant: MachineGrant,
    label: "Machine"
  })
}) {}
