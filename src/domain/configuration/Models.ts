/**
 * Model provider configs (mpc_), configured models (mdl_) and their immutable revisions (mrev_)
 * (spec 2.4, docs/models.md).
 */
import { Schema } from "effect"
import { ConfiguredModelId, ModelGrantId, ModelProviderConfigId, ModelRevisionId, OrgId, ProjectId, SecretId } from "../shared/Ids.ts"
import { ListQuery } from "../shared/Pagination.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Description } from "./Secrets.ts"
import { Timestamp } from "../shared/Timestamp.ts"

/** The wire protocol of a model endpoint (spec 2.4, ModelAPIFormat). */
export const ApiFormat = Schema.Literal("openai-responses", "openai-chat-completions", "anthropic-messages")
export type ApiFormat = typeof ApiFormat.Type

/** Spec 2.4, ModelCacheRetention; `short` when omitted. */
export const CacheRetention = Schema.Literal("none", "short", "long")
export type CacheRetention = typeof CacheRetention.Type

/** tenant: managed through this API; cluster: installed by the operator, read-only here. */
export const ManagementKind = Schema.Literal("tenant", "cluster")
export type ManagementKind = typeof ManagementKind.Type

/** Integers the database stores (Postgres `integer`). */
export const MAX_INT = 2_147_483_647
/** The efforts a reasoning model gets when none are given, and its default among them. */
export const DEFAULT_REASONING_EFFORTS: ReadonlyArray<string> = ["low", "medium", "high"]
export const DEFAULT_REASONING_EFFORT = "medium"
/** The default effort of a model without reasoning. */
export const NO_REASONING_EFFORT = "none"
export const DEFAULT_API_VARIANT = "default"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** The API root including its version path, e.g. https://api.openai.com/v1. */
export const BaseUrl = Schema.String.pipe(
  Schema.filter((text) => {
    if (!URL.canParse(text)) return "must be an absolute http(s) URL such as https://api.openai.com/v1"
    const url = new URL(text)
    if (url.protocol !== "http:" && url.protocol !== "https:") return "must use http or https"
    if (url.username !== "" || url.password !== "") {
      return "must not carry credentials; reference a secret with auth_secret_id"
    }
    if (url.search !== "" || url.hash !== "") return "must not have a query or fragment"
    return true
  })
)

// ---------------------------------------------------------------- provider configs

export class ModelProviderConfig extends Schema.Class<ModelProviderConfig>("ModelProviderConfig")({
  id: ModelProviderConfigId,
  org_id: OrgId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  api_format: ApiFormat,
  base_url: Schema.String,
  auth_secret_id: Schema.NullOr(SecretId),
  management_kind: ManagementKind,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export const CreateModelProviderConfig = Schema.Struct({
  name: ResourceName,
  api_format: ApiFormat,
  base_url: BaseUrl,
  auth_secret_id: Schema.optional(Schema.NullOr(SecretId)),
  description: Schema.optional(Schema.NullOr(Description))
}).annotations(strict)
export type CreateModelProviderConfig = typeof CreateModelProviderConfig.Type

/** Each field present is changed; `null` clears `auth_secret_id` or `description`. */
export const UpdateModelProviderConfig = Schema.Struct({
  name: Schema.optional(ResourceName),
  api_format: Schema.optional(ApiFormat),
  base_url: Schema.optional(BaseUrl),
  auth_secret_id: Schema.optional(Schema.NullOr(SecretId)),
  description: Schema.optional(Schema.NullOr(Description))
}).annotations(strict)
export type UpdateModelProviderConfig = typeof UpdateModelProviderConfig.Type

// ---------------------------------------------------------------- configured models

const Tokens = Schema.Int.pipe(Schema.between(1, MAX_INT))
const Label = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(128, { message: () => "must be at most 128 characters" })
)
const Modalities = Schema.Array(Label).pipe(Schema.minItems(1, { message: () => "must list at least one modality" }))

/** The fields a revision carries, as they travel on the wire. */
const revisionFields = {
  provider_model_slug: Schema.String,
  api_variant: Schema.String,
  context_window_tokens: Schema.Int,
  max_output_tokens: Schema.NullOr(Schema.Int),
  default_max_output_tokens: Schema.NullOr(Schema.Int),
  default_cache_retention: CacheRetention,
  supports_tools: Schema.Boolean,
  supports_reasoning: Schema.Boolean,
  default_reasoning_effort: Schema.String,
  supported_reasoning_efforts: Schema.Array(Schema.String),
  input_modalities: Schema.Array(Schema.String),
  output_modalities: Schema.Array(Schema.String)
}

export class ConfiguredModel extends Schema.Class<ConfiguredModel>("ConfiguredModel")({
  id: ConfiguredModelId,
  org_id: OrgId,
  provider_config_id: ModelProviderConfigId,
  provider_config: Schema.String.annotations({ description: "the provider config's name" }),
  name: Schema.String,
  current_revision_id: ModelRevisionId,
  ...revisionFields,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export class ModelRevision extends Schema.Class<ModelRevision>("ModelRevision")({
  id: ModelRevisionId,
  model_id: ConfiguredModelId,
  ...revisionFields,
  created_at: Timestamp
}) {}

/** The revision fields a request may set; each bound that one field can check alone is checked here. */
const revisionInput = {
  provider_model_slug: Label,
  api_variant: Schema.optional(Label),
  context_window_tokens: Tokens,
  max_output_tokens: Schema.optional(Schema.NullOr(Tokens)),
  default_max_output_tokens: Schema.optional(Schema.NullOr(Tokens)),
  default_cache_retention: Schema.optional(CacheRetention),
  supports_tools: Schema.Boolean,
  supports_reasoning: Schema.Boolean,
  default_reasoning_effort: Schema.optional(Label),
  supported_reasoning_efforts: Schema.optional(Schema.Array(Label)),
  input_modalities: Modalities,
  output_modalities: Modalities
}

export const CreateConfiguredModel = Schema.Struct({
  provider_config_id: ModelProviderConfigId,
  name: ResourceName,
  ...revisionInput
}).annotations(strict)
export type CreateConfiguredModel = typeof CreateConfiguredModel.Type

/** Each field present is changed (a new revision); `null` clears the output limits. */
export const UpdateConfiguredModel = Schema.Struct({
  name: Schema.optional(ResourceName),
  provider_model_slug: Schema.optional(Label),
  api_variant: Schema.optional(Label),
  context_window_tokens: Schema.optional(Tokens),
  max_output_tokens: Schema.optional(Schema.NullOr(Tokens)),
  default_max_output_tokens: Schema.optional(Schema.NullOr(Tokens)),
  default_cache_retention: Schema.optional(CacheRetention),
  supports_tools: Schema.optional(Schema.Boolean),
  supports_reasoning: Schema.optional(Schema.Boolean),
  default_reasoning_effort: Schema.optional(Label),
  supported_reasoning_efforts: Schema.optional(Schema.Array(Label)),
  input_modalities: Schema.optional(Modalities),
  output_modalities: Schema.optional(Modalities)
}).annotations(strict)
export type UpdateConfiguredModel = typeof UpdateConfiguredModel.Type

export const ModelListQuery = Schema.Struct({
  ...ListQuery.fields,
  provider_config_id: Schema.optional(ModelProviderConfigId)
})
export type ModelListQuery = typeof ModelListQuery.Type

export class ModelGrant extends Schema.Class<ModelGrant>("ModelGrant")({
  id: ModelGrantId,
  org_id: OrgId,
  model_id: ConfiguredModelId,
  target_project_id: ProjectId,
  created_at: Timestamp
}) {}

// ---------------------------------------------------------------- for the runtime and agent configs

/** A configured model with its provider config and current revision, as code uses it. */
export interface ResolvedModel {
  readonly providerConfig: {
    readonly id: ModelProviderConfigId
    readonly name: string
    readonly apiFormat: ApiFormat
    readonly baseUrl: string
    readonly authSecretId: SecretId | null
  }
  readonly model: { readonly id: ConfiguredModelId; readonly name: string }
  readonly revision: {
    readonly id: ModelRevisionId
    readonly providerModelSlug: string
    readonly apiVariant: string
    readonly contextWindowTokens: number
    readonly maxOutputTokens: number | null
    readonly defaultMaxOutputTokens: number | null
    readonly defaultCacheRetention: CacheRetention
    readonly supportsTools: boolean
    readonly supportsReasoning: boolean
    readonly defaultReasoningEffort: string
    readonly supportedReasoningEfforts: ReadonlyArray<string>
    readonly inputModalities: ReadonlyArray<string>
    readonly outputModalities: ReadonlyArray<string>
  }
}
