/** The `machine_pool_grants` table. */
import { Effect } from "effect"
import { MachinePoolGrant } from "../../domain/machines/MachinePools.ts"
import { MachinePoolGrantId, MachinePoolId } from "../../domain/shared/Ids.ts"
import { grantsRepository } from "../configuration/GrantsRepository.ts"

export class MachinePoolGrantsRepository extends Effect.Service<MachinePoolGrantsRepository>()(
  "MachinePoolGrantsRepository",
  {
    effect: grantsRepository({
      table: "machine_pool_grants",
      resourceColumn: "machine_pool_id",
      resourceId: MachinePoolId,
      grantId: MachinePoolGrantId,
      grant: MachinePoolGrant,
      label: "Machine pool"
    })
  }
) {}
