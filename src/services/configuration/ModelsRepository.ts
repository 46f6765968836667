/**
 * The `configured_models` table and its `model_revisions`: a model row points at its current
 * revision, which holds the settings; revisions are never changed. `findForCall` reads the
 * model's provider config (its parent), whether the model is granted to the calling project, and
 * the version of its API key secret's value (SecretsRepository.SecretVersion), in the same
 * statement, for a model call.
 */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { ModelProviderConfig } from "../../domain/configuration/ModelProviderConfigs.ts"
import { ConfiguredModel, ModelRevision, ModelSettings } from "../../domain/configuration/Models.ts"
import { ConfiguredModelId, ModelProviderConfigId, ModelRevisionId, OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { foreignKeyOrDie, uniqueOrDie } from "../shared/Sql.ts"
import { secretVersion, SecretVersion } from "./SecretsRepository.ts"
import { PipelinedStatements } from "../shared/PipelinedStatements.ts"

/** A model with its current revision's settings, as stored: a ConfiguredModel without its provider config's name. */
export const StoredModel = Schema.Struct(Struct.omit(ConfiguredModel.fields, ["provider_config"]))
export type StoredModel = typeof StoredModel.Type

/** What a model call needs of the model's provider config. */
export const CallProviderConfig = Schema.Struct(
  Struct.pick(ModelProviderConfig.fields, ["id", "name", "api_format", "base_url", "auth_secret_id"])
)
export type CallProviderConfig = typeof CallProviderConfig.Type

/** A StoredModel with its provider config's CallProviderConfig columns, prefixed `provider_`. */
const StoredModelForCall = Schema.Struct({
  ...StoredModel.fields,
  provider_name: CallProviderConfig.fields.name,
  provider_api_format: CallProviderConfig.fields.api_format,
  provider_base_url: CallProviderConfig.fields.base_url,
  provider_auth_secret_id: CallProviderConfig.fields.auth_secret_id,
  auth_secret_version: Schema.NullOr(SecretVersion),
  granted: Schema.Boolean
})

const NewModel = Schema.Struct({
  id: ConfiguredModelId,
  org_id: OrgId,
  provider_config_id: ModelProviderConfigId,
  name: Schema.String,
  current_revision_id: ModelRevisionId
})
const NewRevision = Schema.Struct({ id: ModelRevisionId, model_id: ConfiguredModelId, ...ModelSettings.fields })

/** A StoredModel's columns, of `configured_models m` and its current `model_revisions r`. */
const MODEL_COLUMNS = [
  "m.id, m.org_id, m.provider_config_id, m.name, m.current_revision_id, m.created_at, m.updated_at",
  ...Object.keys(ModelSettings.fields).map((column) => "r." + column)
].join(", ")

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reads = yield* PipelinedStatements
  const selectModel = sql`
    SELECT ${sql.unsafe(MODEL_COLUMNS)} FROM configured_models m JOIN model_revisions r ON r.id = m.current_revision_id`

  const insertModel = SqlSchema.void({
    Request: NewModel,
    execute: (model) => sql`INSERT INTO configured_models ${sql.insert(model)}`
  })

  const insertRevision = SqlSchema.void({
    Request: NewRevision,
    execute: (revision) => sql`INSERT INTO model_revisions ${sql.insert(revision)}`
  })

  const find = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: ConfiguredModelId, orgId: Schema.UndefinedOr(OrgId) }),
    Result: StoredModel,
    execute: ({ id, orgId }) =>
      sql`${selectModel} WHERE m.id = ${id} ${orgId === undefined ? sql`` : sql`AND m.org_id = ${orgId}`}`
  })

  const findForCall = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: ConfiguredModelId, projectId: ProjectId }),
    Result: StoredModelForCall,
    execute: ({ id, projectId }) =>
      reads.run((sql) =>
        sql`
        SELECT ${sql.unsafe(MODEL_COLUMNS)}, p.name AS provider_name, p.api_format AS provider_api_format,
          p.base_url AS provider_base_url, p.auth_secret_id AS provider_auth_secret_id,
          (SELECT ${secretVersion(sql, "s")} FROM secrets s WHERE s.id = p.auth_secret_id) AS auth_secret_version,
          EXISTS (SELECT 1 FROM model_grants g WHERE g.model_id = m.id AND g.target_project_id = ${projectId}) AS granted
        FROM configured_models m
          JOIN model_revisions r ON r.id = m.current_revision_id
          JOIN model_provider_configs p ON p.id = m.provider_config_id
        WHERE m.id = ${id}`
      )
  })

  const lockInOrg = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: ConfiguredModelId, orgId: OrgId }),
    Result: Schema.Struct({ id: ConfiguredModelId }),
    execute: ({ id, orgId }) => sql`SELECT id FROM configured_models WHERE id = ${id} AND org_id = ${orgId} FOR UPDATE`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ orgId: OrgId, providerConfigId: Schema.UndefinedOr(ModelProviderConfigId) }),
    result: StoredModel,
    column: "m.id",
    select: ({ orgId, providerConfigId }) => sql`
      ${selectModel} WHERE m.org_id = ${orgId}
      ${providerConfigId === undefined ? sql`` : sql`AND m.provider_config_id = ${providerConfigId}`}`
  })

  const setCurrent = SqlSchema.void({
    Request: Schema.Struct({ id: ConfiguredModelId, name: Schema.String, revisionId: ModelRevisionId }),
    execute: ({ id, name, revisionId }) => sql`
      UPDATE configured_models SET name = ${name}, current_revision_id = ${revisionId}, updated_at = now()
      WHERE id = ${id}`
  })

  const revisions = keysetQuery(sql, {
    filter: Schema.Struct({ modelId: ConfiguredModelId }),
    result: ModelRevision,
    order: "descending",
    select: ({ modelId }) => sql`SELECT * FROM model_revisions WHERE model_id = ${modelId}`
  })

  const removeInOrg = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: ConfiguredModelId, orgId: OrgId }),
    Result: Schema.Struct({ id: ConfiguredModelId }),
    execute: ({ id, orgId }) => sql`DELETE FROM configured_models WHERE id = ${id} AND org_id = ${orgId} RETURNING id`
  })

  const named = SqlSchema.findOneOption({
    Request: Schema.Struct({ providerConfigId: ModelProviderConfigId, name: Schema.String }),
    Result: StoredModel,
    execute: ({ name, providerConfigId }) =>
      sql`${selectModel} WHERE m.provider_config_id = ${providerConfigId} AND m.name = ${name}`
  })

  const ofProviderConfig = SqlSchema.findAll({
    Request: ModelProviderConfigId,
    Result: Schema.Struct({ id: ConfiguredModelId, name: Schema.String }),
    execute: (configId) =>
      sql`SELECT id, name FROM configured_models WHERE provider_config_id = ${configId} ORDER BY id`
  })

  const namesInOrgs = SqlSchema.findAll({
    Request: Schema.Struct({
      orgIds: Schema.Array(OrgId),
      providerConfigNames: Schema.Array(Schema.String),
      modelNames: Schema.Array(Schema.String)
    }),
    Result: Schema.Struct({ provider_config: Schema.String, model: Schema.NullOr(Schema.String) }),
    execute: ({ modelNames, orgIds, providerConfigNames }) =>
      sql`
        SELECT p.name AS provider_config, m.name AS model
        FROM model_provider_configs p
        LEFT JOIN configured_models m ON m.provider_config_id = p.id AND m.name = ANY(${modelNames}::text[])
        WHERE p.org_id = ANY(${orgIds}::text[]) AND p.name = ANY(${providerConfigNames}::text[])`
  })

  return {
    /**
     * The provider configs named one of `providerConfigNames` in the organizations `orgIds`, each
     * with its models named one of `modelNames` (a row with `model` null when it has none of them),
     * in one read.
     */
    namesInOrgs: (
      orgIds: ReadonlyArray<OrgId>,
      providerConfigNames: ReadonlyArray<string>,
      modelNames: ReadonlyArray<string>
    ) => Effect.orDie(namesInOrgs({ orgIds, providerConfigNames, modelNames })),
    /** Fails with UniqueViolation when the provider config has a model of that name. */
    insertModel: (model: typeof NewModel.Type) => uniqueOrDie(insertModel(model)),
    insertRevision: (revision: typeof NewRevision.Type) => Effect.orDie(insertRevision(revision)),
    /** The model (of the organization, when given) with its current settings. */
    find: (id: ConfiguredModelId, orgId?: OrgId) => Effect.orDie(find({ id, orgId })),
    /**
     * The model with its current settings, what a model call needs of its provider config, and
     * whether the model is granted to the project `projectId`.
     */
    findForCall: (id: ConfiguredModelId, projectId: ProjectId) =>
      Effect.map(Effect.orDie(findForCall({ id, projectId })), Option.map(({ auth_secret_version, granted, ...row }) => ({
        granted,
        authSecretVersion: auth_secret_version,
        model: row satisfies StoredModel,
        providerConfig: {
          id: row.provider_config_id,
          name: row.provider_name,
          api_format: row.provider_api_format,
          base_url: row.provider_base_url,
          auth_secret_id: row.provider_auth_secret_id
        } satisfies CallProviderConfig
      }))),
    /** Locks the model for a change until the transaction ends; whether it exists. */
    lockInOrg: (id: ConfiguredModelId, orgId: OrgId) => Effect.map(Effect.orDie(lockInOrg({ id, orgId })), Option.isSome),
    page: (orgId: OrgId, providerConfigId: ModelProviderConfigId | undefined, keyset: Keyset) =>
      page({ orgId, providerConfigId }, keyset),
    /** Fails with UniqueViolation when the provider config has another model of that name. */
    setCurrent: (id: ConfiguredModelId, name: string, revisionId: ModelRevisionId) =>
      uniqueOrDie(setCurrent({ id, name, revisionId })),
    /** Revisions, newest first. */
    revisions: (modelId: ConfiguredModelId, keyset: Keyset) => revisions({ modelId }, keyset),
    /** Deletes the model with its revisions; whether it existed. ForeignKeyViolation while agent configs use it. */
    removeInOrg: (id: ConfiguredModelId, orgId: OrgId) =>
      Effect.map(foreignKeyOrDie(removeInOrg({ id, orgId })), Option.isSome),
    named: (providerConfigId: ModelProviderConfigId, name: string) => Effect.orDie(named({ providerConfigId, name })),
    ofProviderConfig: (configId: ModelProviderConfigId) => Effect.orDie(ofProviderConfig(configId))
  } as const
})

export class ModelsRepository extends Context.Service<ModelsRepository, Effect.Success<typeof make>>()("ModelsRepository") {
  static readonly layer = Layer.effect(this, make)
}
