/** The `model_grants` table. */
import { Context, Effect, Layer } from "effect"
import { ModelGrant } from "../../domain/configuration/Models.ts"
import { ConfiguredModelId, ModelGrantId } from "../../domain/shared/Ids.ts"
import { grantsRepository } from "./GrantsRepository.ts"

const make = grantsRepository({
  table: "model_grants",
  resourceColumn: "model_id",
  resourceId: ConfiguredModelId,
  grantId: ModelGrantId,
  grant: ModelGrant,
  label: "Model"
})

export class ModelGrantsRepository extends Context.Service<ModelGrantsRepository, Effect.Success<typeof make>>()("ModelGrantsRepository") {
  static readonly layer = Layer.effect(this, make)
}
