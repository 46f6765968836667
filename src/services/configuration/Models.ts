/**
 * Configured models (docs/models.md): a name under a provider config, whose settings live in
 * immutable revisions; every PATCH adds one and makes it current. Org admins manage models and
 * their project grants; every member can read them. A project uses only the models granted to it.
 */
import { Context, Effect, Layer, Option } from "effect"
import {
  ConfiguredModel,
  type CreateConfiguredModel,
  type ModelListQuery,
  type ResolvedModel,
  type UpdateConfiguredModel
} from "../../domain/configuration/Models.ts"
import { completeSettings, patchedSettings } from "../../domain/configuration/ModelSettingsRules.ts"
import { Conflict, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import { MAX_LISTED_ISSUES } from "../../domain/shared/ListedIssues.ts"
import {
  ConfiguredModelId,
  ModelRevisionId,
  type OrgId,
  type ProjectId
} from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access } from "../tenancy/Access.ts"
import { Grants } from "./Grants.ts"
import { ModelGrantsRepository } from "./ModelGrantsRepository.ts"
import { ModelProviderConfigsRepository } from "./ModelProviderConfigsRepository.ts"
import { type CallProviderConfig, ModelsRepository, type StoredModel } from "./ModelsRepository.ts"

const resolved = (model: StoredModel, config: CallProviderConfig): ResolvedModel => ({
  providerConfig: {
    id: config.id,
    name: config.name,
    apiFormat: config.api_format,
    baseUrl: config.base_url,
    authSecretId: config.auth_secret_id
  },
  model: { id: model.id, name: model.name },
  revision: {
    id: model.current_revision_id,
    providerModelSlug: model.provider_model_slug,
    apiVariant: model.api_variant,
    contextWindowTokens: model.context_window_tokens,
    maxOutputTokens: model.max_output_tokens,
    defaultMaxOutputTokens: model.default_max_output_tokens,
    defaultCacheRetention: model.default_cache_retention,
    supportsTools: model.supports_tools,
    supportsReasoning: model.supports_reasoning,
    defaultReasoningEffort: model.default_reasoning_effort,
    supportedReasoningEfforts: model.supported_reasoning_efforts,
    inputModalities: model.input_modalities,
    outputModalities: model.output_modalities
  }
})

const make = Effect.gen(function*() {
  const models = yield* ModelsRepository
  const providerConfigs = yield* ModelProviderConfigsRepository
  const modelGrants = yield* ModelGrantsRepository
  const grants = yield* Grants
  const access = yield* Access
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions

  const notFound = (modelId: ConfiguredModelId) => () => new NotFound({ error: `Model ${modelId} not found` })
  const nameTaken = (name: string) => () =>
    new Conflict({ error: `The provider config has a model named "${name}" already; pick another name` })

  /** Stored models as the API shows them, with their provider configs' names. */
  const withProviderNames = (stored: ReadonlyArray<StoredModel>) =>
    Effect.map(
      providerConfigs.findByIds([...new Set(stored.map((model) => model.provider_config_id))]),
      (configs) => {
        const names = new Map(configs.map((config) => [config.id, config.name]))
        return stored.map((model) =>
          new ConfiguredModel({ ...model, provider_config: names.get(model.provider_config_id) ?? "" })
        )
      }
    )

  /** The model of the organization (any, when no organization is given) as the API shows it. */
  const found = (modelId: ConfiguredModelId, orgId?: OrgId) =>
    Effect.gen(function*() {
      const stored = yield* models.find(modelId, orgId).pipe(someOrFail(notFound(modelId)))
      const [model] = yield* withProviderNames([stored])
      return model
    })

  const create = (orgId: OrgId, input: CreateConfiguredModel) =>
    transaction(Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      const { name, provider_config_id, ...settings } = input
      const fields = yield* completeSettings(settings)
      yield* providerConfigs.findInOrg(orgId, provider_config_id, "share").pipe(
        someOrFail(() =>
          new InvalidRequest({
            error: `Model provider config ${provider_config_id} is not one of organization ${orgId}`,
            issues: [{ path: "/provider_config_id", message: "no such model provider config in this organization" }]
          })
        )
      )
      const id = yield* ids.make(ConfiguredModelId)
      const revisionId = yield* ids.make(ModelRevisionId)
      yield* models.insertModel({ id, org_id: orgId, provider_config_id, name, current_revision_id: revisionId }).pipe(
        replaceFailure("UniqueViolation", nameTaken(name), "Debug")
      )
      yield* models.insertRevision({ id: revisionId, model_id: id, ...fields })
      return yield* found(id)
    }))

  const list = (orgId: OrgId, query: ModelListQuery) =>
    Effect.andThen(
      access.orgRole(orgId),
      paged(
        listOf("models", orgId, query.provider_config_id),
        query,
        (keyset) => Effect.flatMap(models.page(orgId, query.provider_config_id, keyset), withProviderNames),
        (model) => model.id
      )
    )

  const get = (orgId: OrgId, modelId: ConfiguredModelId) => Effect.andThen(access.orgRole(orgId), found(modelId, orgId))

  const update = (orgId: OrgId, modelId: ConfiguredModelId, patch: UpdateConfiguredModel) =>
    transaction(Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      yield* models.lockInOrg(modelId, orgId)
      const current = yield* models.find(modelId, orgId).pipe(someOrFail(notFound(modelId)))
      const fields = yield* completeSettings(patchedSettings(current, patch))
      const revisionId = yield* ids.make(ModelRevisionId)
      yield* models.insertRevision({ id: revisionId, model_id: modelId, ...fields })
      const name = patch.name ?? current.name
      yield* models.setCurrent(modelId, name, revisionId).pipe(replaceFailure("UniqueViolation", nameTaken(name), "Debug"))
      return yield* found(modelId)
    }))

  const revisions = (orgId: OrgId, modelId: ConfiguredModelId, query: ListQuery) =>
    Effect.andThen(
      get(orgId, modelId),
      paged(
        listOf("model revisions", modelId),
        query,
        (keyset) => models.revisions(modelId, keyset),
        (revision) => revision.id
      )
    )

  /** Deletes the model, its revisions and grants; refused while something still refers to it. */
  const remove = (orgId: OrgId, modelId: ConfiguredModelId) =>
    Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      const removed = yield* models.removeInOrg(modelId, orgId).pipe(
        replaceFailure(
          "ForeignKeyViolation",
          () =>
            new Conflict({
              error: `Model ${modelId} is named by agent configs, which never change: it can be deleted once the ` +
                "projects holding them are deleted. To stop projects using it now, revoke its grants " +
                `(DELETE /orgs/${orgId}/models/${modelId}/grants/{grantID}): their agents' next model calls then fail`
            }),
          "Debug"
        )
      )
      if (!removed) return yield* Effect.fail(notFound(modelId)())
    })

  /** A model of the organization whose grants an org admin may change. */
  const grantable = (orgId: OrgId, modelId: ConfiguredModelId) =>
    Effect.andThen(access.requireOrgRole(orgId, "admin"), models.find(modelId, orgId).pipe(someOrFail(notFound(modelId))))

  const { createGrant, listGrants, removeGrant } = grants.operations(modelGrants, { grantable, visible: get })

  /** The model `modelName` of the provider config `providerConfigName`, when it is granted to the project. */
  const resolveForProject = (orgId: OrgId, projectId: ProjectId, providerConfigName: string, modelName: string) =>
    Effect.gen(function*() {
      const config = yield* providerConfigs.findByName(orgId, providerConfigName.normalize("NFC"))
      if (Option.isNone(config)) return Option.none<ResolvedModel>()
      const model = yield* models.named(config.value.id, modelName.normalize("NFC"))
      if (Option.isNone(model)) return Option.none<ResolvedModel>()
      const granted = yield* modelGrants.grantedAmong(projectId, [model.value.id])
      return granted.has(model.value.id) ? Option.some(resolved(model.value, config.value)) : Option.none<ResolvedModel>()
    })

  /**
   * For each wanted model `model` of a provider config named `provider_config`, where it exists
   * among the organizations `orgIds`: `found` when one of them has it (or, without a model name,
   * has the provider config), else `no_model` when one of them has a provider config of that
   * name, else `no_provider_config`. In the order wanted, from one read.
   */
  const namedInOrgs = (
    orgIds: ReadonlyArray<OrgId>,
    wanted: ReadonlyArray<{ readonly provider_config: string; readonly model?: string | undefined }>
  ) =>
    Effect.gen(function*() {
      const names = wanted.map(({ model, provider_config }) => ({
        provider_config: provider_config.normalize("NFC"),
        model: model?.normalize("NFC")
      }))
      const rows = orgIds.length === 0 || names.length === 0 ? [] : yield* models.namesInOrgs(
        orgIds,
        [...new Set(names.map((name) => name.provider_config))],
        [...new Set(names.flatMap((name) => name.model === undefined ? [] : [name.model]))]
      )
      const configs = new Set(rows.map((row) => row.provider_config))
      const found = new Set(rows.flatMap((row) => row.model === null ? [] : [JSON.stringify([row.provider_config, row.model])]))
      return names.map(({ model, provider_config }) =>
        !configs.has(provider_config)
          ? "no_provider_config" as const
          : model === undefined || found.has(JSON.stringify([provider_config, model]))
          ? "found" as const
          : "no_model" as const
      )
    })

  /**
   * The names of the provider configs of the organizations `orgIds`, as an answer lists them:
   * the first MAX_LISTED_ISSUES in code point order, and how many there are.
   */
  const providerConfigNamesInOrgs = (orgIds: ReadonlyArray<OrgId>) =>
    orgIds.length === 0 ? Effect.succeed({ names: [], total: 0 }) : providerConfigs.namesInOrgs(orgIds, MAX_LISTED_ISSUES)

  /** Whether the organization has a model provider config named `name`. */
  const providerConfigExists = (orgId: OrgId, name: string) =>
    Effect.map(providerConfigs.findByName(orgId, name.normalize("NFC")), Option.isSome)

  /**
   * The model with its provider config and current revision, whether it is granted to the
   * project (a grant revoked since a config named the model), and the version of its API key
   * secret's value (none without one, or once it is deleted), in one read (`NotFound` once the
   * model is deleted).
   */
  const current = (modelId: ConfiguredModelId, projectId: ProjectId) =>
    models.findForCall(modelId, projectId).pipe(
      someOrFail(notFound(modelId)),
      Effect.map(({ authSecretVersion, granted, model, providerConfig }) => ({
        model: resolved(model, providerConfig),
        granted,
        authSecretVersion
      }))
    )

  return {
    create,
    namedInOrgs,
    providerConfigNamesInOrgs,
    list,
    get,
    update,
    revisions,
    remove,
    createGrant,
    listGrants,
    removeGrant,
    resolveForProject,
    providerConfigExists,
    current
  } as const
})

export class Models extends Context.Service<Models, Effect.Success<typeof make>>()("Models") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ModelsRepository.layer,
      ModelProviderConfigsRepository.layer,
      ModelGrantsRepository.layer,
      Grants.layer,
      Access.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
