/**
 * Configured models (mdl_) and their immutable revisions (mrev_) (docs/models.md): a
 * model is a name under a provider config; its settings live in revisions.
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import {
  ConfiguredModelId,
  ModelGrantId,
  ModelProviderConfigId,
  ModelRevisionId,
  OrgId,
  ProjectId,
  type SecretId
} from "../shared/Ids.ts"
import { ListQuery } from "../shared/Pagination.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import type { ApiFormat } from "./ModelProviderConfigs.ts"

/** Spec 2.4, ModelCacheRetention; `short` when omitted. */
export const CacheRetention = Schema.Literals(["none", "short", "long"])
export type CacheRetention = typeof CacheRetention.Type

/** Integers the database stores (Postgres `integer`). */
export const MAX_INT = 2_147_483_647
/** The efforts a reasoning model gets when none are given, and its default among them. */
export const DEFAULT_REASONING_EFFORTS: ReadonlyArray<string> = ["low", "medium", "high"]
export const DEFAULT_REASONING_EFFORT = "medium"
/** The default effort of a model without reasoning. */
export const NO_REASONING_EFFORT = "none"
export const DEFAULT_API_VARIANT = "default"

const Tokens = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: MAX_INT })))
const Label = Schema.String.pipe(
  Schema.check(Schema.isMinLength(1, { message: "must not be empty" })),
  Schema.check(Schema.isMaxLength(128, { message: "must be at most 128 characters" }))
)
const Modalities = Schema.Array(Label).pipe(Schema.check(Schema.isMinLength(1, { message: "must list at least one modality" })))

/** The settings a revision holds. */
export const ModelSettings = Schema.Struct({
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
})
export type ModelSettings = typeof ModelSettings.Type

export class ConfiguredModel extends Schema.Class<ConfiguredModel>("ConfiguredModel")({
  id: ConfiguredModelId,
  org_id: OrgId,
  provider_config_id: ModelProviderConfigId,
  provider_config: Schema.String.annotate({ description: "the provider config's name" }),
  name: Schema.String,
  current_revision_id: ModelRevisionId,
  ...ModelSettings.fields,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export class ModelRevision extends Schema.Class<ModelRevision>("ModelRevision")({
  id: ModelRevisionId,
  model_id: ConfiguredModelId,
  ...ModelSettings.fields,
  created_at: Timestamp
}) {}

/** The revision settings a request may set; each bound that one field can check alone is checked here. */
const settingsInput = {
  provider_model_slug: Label,
  api_variant: optional(Label),
  context_window_tokens: Tokens,
  max_output_tokens: optional(Schema.NullOr(Tokens)),
  default_max_output_tokens: optional(Schema.NullOr(Tokens)),
  default_cache_retention: optional(CacheRetention),
  supports_tools: Schema.Boolean,
  supports_reasoning: Schema.Boolean,
  default_reasoning_effort: optional(Label),
  supported_reasoning_efforts: optional(Schema.Array(Label)),
  input_modalities: Modalities,
  output_modalities: Modalities
}

/** Revision settings as a request gives them: the optional ones fall back to defaults (ModelSettingsRules.ts). */
export const ModelSettingsInput = Schema.Struct(settingsInput)
export type ModelSettingsInput = typeof ModelSettingsInput.Type

export const CreateConfiguredModel = Schema.Struct({
  provider_config_id: ModelProviderConfigId,
  name: ResourceName,
  ...settingsInput
})
export type CreateConfiguredModel = typeof CreateConfiguredModel.Type

/** Each field present is changed (a new revision); `null` clears the output limits. */
export const UpdateConfiguredModel = Schema.Struct({
  name: optional(ResourceName),
  provider_model_slug: optional(Label),
  api_variant: optional(Label),
  context_window_tokens: optional(Tokens),
  max_output_tokens: optional(Schema.NullOr(Tokens)),
  default_max_output_tokens: optional(Schema.NullOr(Tokens)),
  default_cache_retention: optional(CacheRetention),
  supports_tools: optional(Schema.Boolean),
  supports_reasoning: optional(Schema.Boolean),
  default_reasoning_effort: optional(Label),
  supported_reasoning_efforts: optional(Schema.Array(Label)),
  input_modalities: optional(Modalities),
  output_modalities: optional(Modalities)
})
export type UpdateConfiguredModel = typeof UpdateConfiguredModel.Type

export const ModelListQuery = Schema.Struct({
  ...ListQuery.fields,
  provider_config_id: optional(ModelProviderConfigId)
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
