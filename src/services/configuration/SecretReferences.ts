/**
 * What holds a secret: model provider configs and machine pools (their auth secret and their
 * secret environment); integrations join here.
 * A secret in use cannot be deleted, and a member whose personal secret is in use cannot be
 * removed from the organization.
 */
import { Context, Effect, Layer } from "effect"
import type { OrgId, SecretId, UserId } from "../../domain/shared/Ids.ts"
import { MachinePoolsRepository } from "../machines/MachinePoolsRepository.ts"
import { ModelProviderConfigsRepository } from "./ModelProviderConfigsRepository.ts"
import { SecretsRepository } from "./SecretsRepository.ts"

/** A resource that holds a secret, named for a `conflict` message. */
export interface Referrer {
  readonly secretId: SecretId
  readonly kind: string
  readonly id: string
  readonly name: string
}

export const describeReferrer = (referrer: Referrer) => `${referrer.kind} "${referrer.name}" (${referrer.id})`

const make = Effect.gen(function*() {
  const providerConfigs = yield* ModelProviderConfigsRepository
  const secrets = yield* SecretsRepository
  const pools = yield* MachinePoolsRepository

  /** Everything that holds one of these secrets. */
  const referrersOf = (secretIds: ReadonlyArray<SecretId>) =>
    Effect.map(
      Effect.zip(providerConfigs.usingSecrets(secretIds), pools.usingSecrets(secretIds)),
      ([configs, poolRows]) => [
        ...configs.flatMap((config): ReadonlyArray<Referrer> =>
          config.auth_secret_id === null
            ? []
            : [{ secretId: config.auth_secret_id, kind: "model provider config", id: config.id, name: config.name }]
        ),
        ...poolRows.map((pool): Referrer => ({ secretId: pool.secret_id, kind: "machine pool", id: pool.id, name: pool.name }))
      ]
    )

  /** Why the member cannot leave the organization now: their personal secrets in use; empty when none is. */
  const memberRemovalBlockers = (orgId: OrgId, userId: UserId) =>
    Effect.gen(function*() {
      const personal = yield* secrets.personalOf(orgId, userId)
      const names = new Map(personal.map((secret) => [secret.id, secret.name]))
      const referrers = yield* referrersOf(personal.map((secret) => secret.id))
      return referrers.map((referrer) =>
        `personal secret "${names.get(referrer.secretId)}" (${referrer.secretId}) is used by ${describeReferrer(referrer)}; ` +
        `point it at another secret first`
      )
    })

  return { referrersOf, memberRemovalBlockers } as const
})

export class SecretReferences extends Context.Service<SecretReferences, Effect.Success<typeof make>>()("SecretReferences") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ModelProviderConfigsRepository.layer,
      SecretsRepository.layer,
      MachinePoolsRepository.layer
    ])
  )
}
