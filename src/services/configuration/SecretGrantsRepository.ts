/** The `secret_grants` table. */
import { Context, Effect, Layer } from "effect"
import { SecretGrant } from "../../domain/configuration/Secrets.ts"
import { SecretGrantId, SecretId } from "../../domain/shared/Ids.ts"
import { grantsRepository } from "./GrantsRepository.ts"

const make = grantsRepository({
  table: "secret_grants",
  resourceColumn: "secret_id",
  resourceId: SecretId,
  grantId: SecretGrantId,
  grant: SecretGrant,
  label: "Secret"
})

export class SecretGrantsRepository extends Context.Service<SecretGrantsRepository, Effect.Success<typeof make>>()("SecretGrantsRepository") {
  static readonly layer = Layer.effect(this, make)
}
