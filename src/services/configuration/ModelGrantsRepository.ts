/** The `model_grants` table. */
import { Effect } from "effect"
import { ModelGrant } from "../../domain/configuration/Models.ts"
import { ConfiguredModelId, ModelGrantId } from "../../domain/shared/Ids.ts"
import { grantsRepository } from "./GrantsRepository.ts"

export class ModelGrantsRepository extends Effect.Service<ModelGrantsRepository>()("ModelGrantsRepository", {
  effect: grantsRepository({
    table: "model_grants",
    resourceColumn: "model_id",
    resourceId: ConfiguredModelId,
    grantId: ModelGrantId,
    grant: ModelGrant,
    label: "Model"
  })
}) {}
