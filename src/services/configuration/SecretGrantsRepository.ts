/** The `secret_grants` table. */
import { Effect } from "effect"
import { SecretGrant } from "../../domain/configuration/Secrets.ts"
import { SecretGrantId, SecretId } from "../../domain/shared/Ids.ts"
import { grantsRepository } from "./GrantsRepository.ts"

export class SecretGrantsRepository extends Effect.Service<SecretGrantsRepository>()("SecretGrantsRepository", {
  effect: grantsRepository({
    table: "secret_grants",
    resourceColumn: "secret_id",
    resourceId: SecretId,
    grantId: SecretGrantId,
    grant: SecretGrant,
    label: "Secret"
  })
}) {}
