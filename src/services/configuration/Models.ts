/**
 * Configured models (docs/models.md): a name under a provider config, whose settings live in
 * immutable revisions; every PATCH adds one and makes it current. Org admins manage models and
 * their project grants; every member can read them. A project uses only the models granted to it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { Conflict, InvalidRequest, type Issue, NotFound } from "../../domain/shared/Errors.ts"
import type { CreateGrant } from "../../domain/configuration/Grants.ts"
import {
  ConfiguredModelId,
  ModelGrantId,
  type ModelProviderConfigId,
  ModelRevisionId,
  type OrgId,
  type ProjectId,
  type SecretId
} from "../../domain/shared/Ids.ts"
import {
  type ApiFormat,
  type CacheRetention,
  ConfiguredModel,
  type CreateConfiguredModel,
  DEFAULT_API_VARIANT,
  DEFAULT_REASONING_EFFORT,
  DEFAULT_REASONING_EFFORTS,
  ModelGrant,
  type ModelListQuery,
  ModelRevision,
  NO_REASONING_EFFORT,
  type ResolvedModel,
  type UpdateConfiguredModel
} from "../../domain/configuration/Models.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { toPage } from "../../domain/shared/Pagination.ts"
import { Access } from "../tenancy/Access.ts"
import { grantStore } from "./Grants.ts"
import { pageRequest } from "../shared/Paging.ts"
import { firstOr, onDuplicate, onForeignKeyViolation } from "../shared/Sql.ts"

/** The settings a revision holds, as stored. */
interface RevisionFields {
  readonly provider_model_slug: string
  readonly api_variant: string
  readonly context_window_tokens: number
  readonly max_output_tokens: number | null
  readonly default_max_output_tokens: number | null
  readonly default_cache_retention: CacheRetention
  readonly supports_tools: boolean
  readonly supports_reasoning: boolean
  readonly default_reasoning_effort: string
  readonly supported_reasoning_efforts: ReadonlyArray<string>
  readonly input_modalities: ReadonlyArray<string>
  readonly output_modalities: ReadonlyArray<string>
}

/** Revision settings as a request gives them: the optional ones fall back to defaults. */
type RevisionInput =
  & Pick<
    RevisionFields,
    "provider_model_slug" | "context_window_tokens" | "supports_tools" | "supports_reasoning" | "input_modalities" | "output_modalities"
  >
  & Partial<Omit<RevisionFields, "max_output_tokens" | "default_max_output_tokens">>
  & {
    readonly max_output_tokens?: number | null | undefined
    readonly default_max_output_tokens?: number | null | undefined
  }

interface RevisionRow extends RevisionFields {
  readonly id: ModelRevisionId
  readonly model_id: ConfiguredModelId
  readonly created_at: Date
}

interface ModelRow extends RevisionFields {
  readonly id: ConfiguredModelId
  readonly org_id: OrgId
  readonly provider_config_id: ModelProviderConfigId
  readonly provider_config: string
  readonly api_format: ApiFormat
  readonly base_url: string
  readonly auth_secret_id: SecretId | null
  readonly name: string
  readonly current_revision_id: ModelRevisionId
  readonly created_at: Date
  readonly updated_at: Date
}

interface GrantRow {
  readonly id: ModelGrantId
  readonly org_id: OrgId
  readonly model_id: ConfiguredModelId
  readonly target_project_id: ProjectId
  readonly created_at: Date
}

const REVISION_COLUMNS = [
  "provider_model_slug",
  "api_variant",
  "context_window_tokens",
  "max_output_tokens",
  "default_max_output_tokens",
  "default_cache_retention",
  "supports_tools",
  "supports_reasoning",
  "default_reasoning_effort",
  "supported_reasoning_efforts",
  "input_modalities",
  "output_modalities"
] as const

const revisionFieldsOf = (row: RevisionFields): RevisionFields =>
  Object.fromEntries(REVISION_COLUMNS.map((column) => [column, row[column]])) as unknown as RevisionFields

const toModel = (row: ModelRow) =>
  new ConfiguredModel({
    id: row.id,
    org_id: row.org_id,
    provider_config_id: row.provider_config_id,
    provider_config: row.provider_config,
    name: row.name,
    current_revision_id: row.current_revision_id,
    ...revisionFieldsOf(row),
    created_at: row.created_at,
    updated_at: row.updated_at
  }, { disableValidation: true })

const toRevision = (row: RevisionRow) =>
  new ModelRevision({ id: row.id, model_id: row.model_id, ...revisionFieldsOf(row), created_at: row.created_at }, {
    disableValidation: true
  })

const toGrant = (row: GrantRow) => new ModelGrant(row, { disableValidation: true })

const toResolved = (row: ModelRow): ResolvedModel => ({
  providerConfig: {
    id: row.provider_config_id,
    name: row.provider_config,
    apiFormat: row.api_format,
    baseUrl: row.base_url,
    authSecretId: row.auth_secret_id
  },
  model: { id: row.id, name: row.name },
  revision: {
    id: row.current_revision_id,
    providerModelSlug: row.provider_model_slug,
    apiVariant: row.api_variant,
    contextWindowTokens: row.context_window_tokens,
    maxOutputTokens: row.max_output_tokens,
    defaultMaxOutputTokens: row.default_max_output_tokens,
    defaultCacheRetention: row.default_cache_retention,
    supportsTools: row.supports_tools,
    supportsReasoning: row.supports_reasoning,
    defaultReasoningEffort: row.default_reasoning_effort,
    supportedReasoningEfforts: row.supported_reasoning_efforts,
    inputModalities: row.input_modalities,
    outputModalities: row.output_modalities
  }
})

/**
 * Fills the defaults of a revision and checks what no single field can check alone; every
 * problem is one issue. Reasoning models default to efforts low, medium, high (default medium);
 * a model without reasoning has no efforts and the default effort "none".
 */
const completeRevision = (input: RevisionInput): Effect.Effect<RevisionFields, InvalidRequest> => {
  const issues: Array<Issue> = []
  const window = input.context_window_tokens
  const maxOutput = input.max_output_tokens ?? null
  const defaultMaxOutput = input.default_max_output_tokens ?? null
  if (maxOutput !== null && maxOutput > window) {
    issues.push({ path: "/max_output_tokens", message: `must be at most context_window_tokens (${window})` })
  }
  if (defaultMaxOutput !== null && defaultMaxOutput > (maxOutput ?? window)) {
    issues.push({
      path: "/default_max_output_tokens",
      message: maxOutput === null
        ? `must be at most context_window_tokens (${window})`
        : `must be at most max_output_tokens (${maxOutput})`
    })
  }
  const efforts = input.supported_reasoning_efforts ?? (input.supports_reasoning ? DEFAULT_REASONING_EFFORTS : [])
  if (new Set(efforts).size !== efforts.length) {
    issues.push({ path: "/supported_reasoning_efforts", message: "must not list an effort twice" })
  }
  const defaultEffort = input.default_reasoning_effort ??
    (!input.supports_reasoning
      ? NO_REASONING_EFFORT
      : efforts.includes(DEFAULT_REASONING_EFFORT)
      ? DEFAULT_REASONING_EFFORT
      : efforts[0] ?? DEFAULT_REASONING_EFFORT)
  if (input.supports_reasoning) {
    if (efforts.length === 0) {
      issues.push({ path: "/supported_reasoning_efforts", message: "must list at least one effort when supports_reasoning is true" })
    } else if (!efforts.includes(defaultEffort)) {
      issues.push({ path: "/default_reasoning_effort", message: `must be one of supported_reasoning_efforts (${efforts.join(", ")})` })
    }
  } else {
    if (efforts.length > 0) {
      issues.push({ path: "/supported_reasoning_efforts", message: "must be empty when supports_reasoning is false" })
    }
    if (defaultEffort !== NO_REASONING_EFFORT) {
      issues.push({ path: "/default_reasoning_effort", message: `must be "${NO_REASONING_EFFORT}" when supports_reasoning is false` })
    }
  }
  if (issues.length > 0) {
    return Effect.fail(
      new InvalidRequest({
        error: "The model settings do not fit together: " + issues.map((i) => `${i.path}: ${i.message}`).join("; "),
        issues
      })
    )
  }
  return Effect.succeed({
    provider_model_slug: input.provider_model_slug,
    api_variant: input.api_variant ?? DEFAULT_API_VARIANT,
    context_window_tokens: window,
    max_output_tokens: maxOutput,
    default_max_output_tokens: defaultMaxOutput,
    default_cache_retention: input.default_cache_retention ?? "short",
    supports_tools: input.supports_tools,
    supports_reasoning: input.supports_reasoning,
    default_reasoning_effort: defaultEffort,
    supported_reasoning_efforts: efforts,
    input_modalities: input.input_modalities,
    output_modalities: input.output_modalities
  })
}

/**
 * The settings of the next revision: the current ones with the patch applied. When the patch
 * switches reasoning on or off without saying which efforts, the efforts fall back to their defaults.
 */
const patchedRevision = (current: RevisionFields, patch: UpdateConfiguredModel): RevisionInput => {
  const reasoningChanged = patch.supports_reasoning !== undefined && patch.supports_reasoning !== current.supports_reasoning
  const { name: _, ...fields } = patch
  const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))
  return {
    ...current,
    ...(reasoningChanged ? { supported_reasoning_efforts: undefined, default_reasoning_effort: undefined } : {}),
    ...defined
  }
}

const notFound = (modelId: ConfiguredModelId) => () => new NotFound({ error: `Model ${modelId} not found` })
const nameTaken = (name: string) => () =>
  new Conflict({ error: `The provider config has a model named "${name}" already; pick another name` })

export class Models extends Effect.Service<Models>()("Models", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const grants = grantStore(sql, {
      table: "model_grants",
      resourceColumn: "model_id",
      resourceLabel: "Model",
      newId: ModelGrantId.make,
      toGrant
    })
    const access = yield* Access

    const selectModel = sql`
      SELECT m.id, m.org_id, m.provider_config_id, c.name AS provider_config, c.api_format, c.base_url,
        c.auth_secret_id, m.name, m.current_revision_id, ${sql.unsafe(REVISION_COLUMNS.map((c) => "r." + c).join(", "))},
        m.created_at, m.updated_at
      FROM configured_models m
      JOIN model_provider_configs c ON c.id = m.provider_config_id
      JOIN model_revisions r ON r.id = m.current_revision_id`

    const findRow = (modelId: ConfiguredModelId, orgId?: OrgId) =>
      Effect.flatMap(
        sql<ModelRow>`${selectModel} WHERE m.id = ${modelId} ${orgId === undefined ? sql`` : sql`AND m.org_id = ${orgId}`}`
          .pipe(Effect.orDie),
        firstOr(notFound(modelId))
      )

    const insertRevision = (modelId: ConfiguredModelId, fields: RevisionFields) => {
      const id = ModelRevisionId.make()
      return Effect.as(sql`INSERT INTO model_revisions ${sql.insert({ id, model_id: modelId, ...fields })}`, id)
    }

    const create = (orgId: OrgId, input: CreateConfiguredModel) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        const { name, provider_config_id, ...settings } = input
        const fields = yield* completeRevision(settings)
        const configs = yield* sql<{ id: ModelProviderConfigId }>`
          SELECT id FROM model_provider_configs WHERE id = ${provider_config_id} AND org_id = ${orgId} FOR SHARE`
        yield* firstOr(() =>
          new InvalidRequest({
            error: `Model provider config ${provider_config_id} is not one of organization ${orgId}`,
            issues: [{ path: "/provider_config_id", message: "no such model provider config in this organization" }]
          })
        )(configs)
        const id = ConfiguredModelId.make()
        const revisionId = ModelRevisionId.make()
        yield* sql`
          INSERT INTO configured_models ${
          sql.insert({ id, org_id: orgId, provider_config_id, name, current_revision_id: revisionId })
        }`.pipe(onDuplicate(nameTaken(name)))
        yield* sql`INSERT INTO model_revisions ${sql.insert({ id: revisionId, model_id: id, ...fields })}`
        return toModel(yield* findRow(id))
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const list = (orgId: OrgId, query: ModelListQuery) =>
      Effect.gen(function*() {
        yield* access.orgRole(orgId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<ModelRow>`
          ${selectModel}
          WHERE m.org_id = ${orgId}
          ${query.provider_config_id === undefined ? sql`` : sql`AND m.provider_config_id = ${query.provider_config_id}`}
          ${after === undefined ? sql`` : sql`AND m.id > ${after}`}
          ORDER BY m.id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toModel), limit, (model) => model.id)
      })

    const get = (orgId: OrgId, modelId: ConfiguredModelId) =>
      Effect.gen(function*() {
        yield* access.orgRole(orgId)
        return toModel(yield* findRow(modelId, orgId))
      })

    const update = (orgId: OrgId, modelId: ConfiguredModelId, patch: UpdateConfiguredModel) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        yield* sql`SELECT id FROM configured_models WHERE id = ${modelId} AND org_id = ${orgId} FOR UPDATE`
        const current = yield* findRow(modelId, orgId)
        const fields = yield* completeRevision(patchedRevision(revisionFieldsOf(current), patch))
        const revisionId = yield* insertRevision(modelId, fields)
        const name = patch.name ?? current.name
        yield* sql`
          UPDATE configured_models SET name = ${name}, current_revision_id = ${revisionId}, updated_at = now()
          WHERE id = ${modelId}`.pipe(onDuplicate(nameTaken(name)))
        return toModel(yield* findRow(modelId))
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const revisions = (orgId: OrgId, modelId: ConfiguredModelId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* get(orgId, modelId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<RevisionRow>`
          SELECT id, model_id, ${sql.unsafe(REVISION_COLUMNS.join(", "))}, created_at FROM model_revisions
          WHERE model_id = ${modelId} ${after === undefined ? sql`` : sql`AND id < ${after}`}
          ORDER BY id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toRevision), limit, (revision) => revision.id)
      })

    /** Deletes the model, its revisions and grants; refused while something still refers to it. */
    const remove = (orgId: OrgId, modelId: ConfiguredModelId) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        const rows = yield* sql<{ id: ConfiguredModelId }>`
          DELETE FROM configured_models WHERE id = ${modelId} AND org_id = ${orgId} RETURNING id`.pipe(
          onForeignKeyViolation(() =>
            new Conflict({ error: `Model ${modelId} is still used by agent configs; it cannot be deleted` })
          )
        )
        yield* firstOr(notFound(modelId))(rows)
      })

    const createGrant = (orgId: OrgId, modelId: ConfiguredModelId, input: CreateGrant) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        yield* findRow(modelId, orgId)
        return yield* grants.create(orgId, modelId, input.target_project_id)
      })

    const listGrants = (orgId: OrgId, modelId: ConfiguredModelId, query: ListQuery) =>
      Effect.zipRight(get(orgId, modelId), grants.list(modelId, query))

    const removeGrant = (orgId: OrgId, modelId: ConfiguredModelId, grantId: ModelGrantId) =>
      Effect.zipRight(access.requireOrgRole(orgId, "admin"), Effect.zipRight(findRow(modelId, orgId), grants.remove(modelId, grantId)))

    /** The model `modelName` of the provider config `providerConfigName`, when it is granted to the project. */
    const resolveForProject = (orgId: OrgId, projectId: ProjectId, providerConfigName: string, modelName: string) =>
      sql<ModelRow>`
        ${selectModel}
        WHERE m.org_id = ${orgId} AND c.name = ${providerConfigName.normalize("NFC")}
          AND m.name = ${modelName.normalize("NFC")}
          AND EXISTS (SELECT 1 FROM model_grants g WHERE g.model_id = m.id AND g.target_project_id = ${projectId})`
        .pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toResolved)),
          Effect.orDie
        )

    /** The model with its current revision, for rendering at response time. */
    const current = (modelId: ConfiguredModelId) => Effect.map(findRow(modelId), toResolved)

    return {
      create,
      list,
      get,
      update,
      revisions,
      remove,
      createGrant,
      listGrants,
      removeGrant,
      resolveForProject,
      current
    } as const
  })
}) {}
