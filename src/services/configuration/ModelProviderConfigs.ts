/**
 * Model provider configs (docs/models.md): where a model is reached (API format, base URL) and
 * with which credential (a secret). Org admins manage them; every member can read them.
 * Cluster-managed configs are read-only here.
 */
import { Context, Effect, Layer } from "effect"
import type {
  CreateModelProviderConfig,
  ModelProviderConfig,
  UpdateModelProviderConfig
} from "../../domain/configuration/ModelProviderConfigs.ts"
import { Conflict, Forbidden, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import { ModelProviderConfigId, type OrgId, type SecretId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { NetworkPolicy } from "../shared/NetworkPolicy.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access } from "../tenancy/Access.ts"
import { ModelProviderConfigsRepository } from "./ModelProviderConfigsRepository.ts"
import { ModelsRepository } from "./ModelsRepository.ts"
import { Secrets } from "./Secrets.ts"

const make = Effect.gen(function*() {
  const configs = yield* ModelProviderConfigsRepository
  const models = yield* ModelsRepository
  const secrets = yield* Secrets
  const access = yield* Access
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions
  const network = yield* NetworkPolicy

  /** A base URL the operator's network policy refuses (a private address literal) is invalid at `/base_url`. */
  const requireAllowedBaseUrl = (baseUrl: string | undefined) => {
    const problem = baseUrl === undefined ? undefined : network.literalProblem(baseUrl)
    return problem === undefined ? Effect.void : Effect.fail(
      new InvalidRequest({ error: `base_url ${problem}`, issues: [{ path: "/base_url", message: problem }] })
    )
  }

  const notFound = (id: ModelProviderConfigId) => () => new NotFound({ error: `Model provider config ${id} not found` })
  const nameTaken = (name: string) => () =>
    new Conflict({ error: `The organization has a model provider config named "${name}" already; pick another name` })

  /** The credential must be a secret the caller can see in this organization; held until the transaction ends. */
  const requireAuthSecret = (orgId: OrgId, secretId: SecretId) =>
    secrets.visible(orgId, secretId, "share").pipe(
      replaceFailure(
        "NotFound",
        () =>
          new InvalidRequest({
            error: `Secret ${secretId} is neither an organization secret of ${orgId} nor one of your personal secrets there`,
            issues: [{ path: "/auth_secret_id", message: "no such secret visible to the caller in this organization" }]
          }),
        "Debug"
      )
    )

  /**
   * A config whose key is a colleague's personal secret sends it where its owner chose: another
   * admin may rename or describe it, but not send the key elsewhere (docs/models.md).
   */
  const requireOwnKeyToMove = (
    orgId: OrgId,
    config: Pick<ModelProviderConfig, "id" | "base_url" | "auth_secret_id">,
    baseUrl: string | undefined
  ) =>
    baseUrl === undefined || baseUrl === config.base_url || config.auth_secret_id === null
      ? Effect.void
      : secrets.visible(orgId, config.auth_secret_id).pipe(
        replaceFailure(
          "NotFound",
          () =>
            new Forbidden({
              error: `Model provider config ${config.id} sends a colleague's personal secret (${config.auth_secret_id}); ` +
                "only its owner may change its base_url. To point the config elsewhere, set auth_secret_id " +
                "to a secret of yours or of the organization in the same request"
            }),
          "Debug"
        )
      )

  /** A tenant-managed config the caller (an org admin) may change, locked until the transaction ends. */
  const changeable = (orgId: OrgId, id: ModelProviderConfigId, action: string) =>
    Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      const config = yield* configs.findInOrg(orgId, id, "update").pipe(someOrFail(notFound(id)))
      if (config.management_kind === "cluster") {
        return yield* Effect.fail(
          new Forbidden({ error: `Model provider config ${id} is cluster-managed; it cannot be ${action} through this API` })
        )
      }
      return config
    })

  const create = (orgId: OrgId, input: CreateModelProviderConfig) =>
    transaction(Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      yield* requireAllowedBaseUrl(input.base_url)
      const authSecretId = input.auth_secret_id ?? null
      if (authSecretId !== null) yield* requireAuthSecret(orgId, authSecretId)
      return yield* configs.insert({
        id: yield* ids.make(ModelProviderConfigId),
        org_id: orgId,
        name: input.name,
        description: input.description ?? null,
        api_format: input.api_format,
        base_url: input.base_url,
        auth_secret_id: authSecretId,
        management_kind: "tenant"
      }).pipe(replaceFailure("UniqueViolation", nameTaken(input.name), "Debug"))
    }))

  const list = (orgId: OrgId, query: ListQuery) =>
    Effect.andThen(
      access.orgRole(orgId),
      paged(listOf("model provider configs", orgId), query, (keyset) => configs.page(orgId, keyset), (config) => config.id)
    )

  const get = (orgId: OrgId, id: ModelProviderConfigId) =>
    Effect.andThen(access.orgRole(orgId), configs.findInOrg(orgId, id).pipe(someOrFail(notFound(id))))

  const update = (orgId: OrgId, id: ModelProviderConfigId, patch: UpdateModelProviderConfig) =>
    transaction(Effect.gen(function*() {
      const config = yield* changeable(orgId, id, "changed")
      yield* requireAllowedBaseUrl(patch.base_url)
      const authSecretId = patch.auth_secret_id === undefined ? config.auth_secret_id : patch.auth_secret_id
      if (authSecretId !== null && authSecretId !== config.auth_secret_id) yield* requireAuthSecret(orgId, authSecretId)
      if (authSecretId === config.auth_secret_id) yield* requireOwnKeyToMove(orgId, config, patch.base_url)
      const name = patch.name ?? config.name
      return yield* configs.update({
        id,
        name,
        description: patch.description === undefined ? config.description : patch.description,
        api_format: patch.api_format ?? config.api_format,
        base_url: patch.base_url ?? config.base_url,
        auth_secret_id: authSecretId
      }).pipe(replaceFailure("UniqueViolation", nameTaken(name), "Debug"))
    }))

  const remove = (orgId: OrgId, id: ModelProviderConfigId) =>
    transaction(Effect.gen(function*() {
      yield* changeable(orgId, id, "deleted")
      const inUse = yield* models.ofProviderConfig(id)
      if (inUse.length > 0) {
        return yield* Effect.fail(
          new Conflict({
            error: `Model provider config ${id} has configured models: ` +
              inUse.map((model) => `"${model.name}" (${model.id})`).join(", ") +
              "; delete them first (a model that agent configs name cannot be deleted: revoke its grants instead)"
          })
        )
      }
      yield* configs.remove(id)
    }))

  return { create, list, get, update, remove } as const
})

export class ModelProviderConfigs extends Context.Service<ModelProviderConfigs, Effect.Success<typeof make>>()("ModelProviderConfigs") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      NetworkPolicy.layer,
      ModelProviderConfigsRepository.layer,
      ModelsRepository.layer,
      Secrets.layer,
      Access.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
