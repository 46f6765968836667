/**
 * The AgentConfig resource (spec 2.3), its rendered model (AgentConfigModel, spec 2.4) and the
 * body of createAgentConfig (spec 4.1).
 */
import { Schema } from "effect"
import { AgentConfigId, ConfiguredModelId, ModelRevisionId, OrgId, ProjectId } from "../../shared/Ids.ts"
import { ApiFormat, CacheRetention, type ResolvedModel } from "../Models.ts"
import { Timestamp } from "../../shared/Timestamp.ts"
import { type ModelOverrides, effectiveOutputTokens } from "./Compile.ts"
import { CompiledAgentConfig } from "./Compiled.ts"

export const SourceFormat = Schema.Literal("yaml", "json")

const Hash = Schema.String.pipe(Schema.pattern(/^sha256:[0-9a-f]{64}$/))

export class AgentConfigModel extends Schema.Class<AgentConfigModel>("AgentConfigModel")({
  provider_config: Schema.String,
  name: Schema.String,
  provider_model_slug: Schema.String,
  configured_model_id: ConfiguredModelId,
  current_revision_id: ModelRevisionId,
  api_format: ApiFormat,
  api_variant: Schema.String,
  context_window_tokens: Schema.Int,
  max_output_tokens: Schema.NullOr(Schema.Int),
  default_max_output_tokens: Schema.optional(Schema.NullOr(Schema.Int)),
  default_cache_retention: CacheRetention,
  supports_tools: Schema.Boolean,
  supports_reasoning: Schema.Boolean,
  default_reasoning_effort: Schema.String,
  supported_reasoning_efforts: Schema.Array(Schema.String),
  input_modalities: Schema.Array(Schema.String),
  output_modalities: Schema.Array(Schema.String)
}) {}

export class AgentConfig extends Schema.Class<AgentConfig>("AgentConfig")({
  id: AgentConfigId,
  org_id: OrgId,
  project_id: ProjectId,
  source: Schema.optional(Schema.String),
  source_format: Schema.optional(SourceFormat),
  effective_definition_hash: Hash,
  model: AgentConfigModel,
  instruction_hash: Schema.optional(Hash),
  created_at: Timestamp,
  compiled_definition: CompiledAgentConfig
}) {}

const AgentConfigDefinitionObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "AgentConfigDefinitionObject",
  description: "An AgentConfigDefinition (spec 2.5) as a JSON object; checked like a source text, with issues " +
    "positioned in the stored canonical JSON"
})

export const CreateAgentConfig = Schema.Struct({
  source: Schema.Union(
    Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" })),
    AgentConfigDefinitionObject
  ).annotations({ description: "YAML or JSON text, or (with source_format json) the definition as an object" }),
  source_format: SourceFormat
}).annotations({ parseOptions: { onExcessProperty: "error" } })
export type CreateAgentConfig = typeof CreateAgentConfig.Type

/**
 * The model of a config as of now: the configured model's current revision and names, narrowed
 * by the config's overrides.
 */
export const renderModel = (current: ResolvedModel, overrides: ModelOverrides): AgentConfigModel => {
  const revision = current.revision
  const { ceiling, perRequest } = effectiveOutputTokens(revision, overrides)
  return new AgentConfigModel({
    provider_config: current.providerConfig.name,
    name: current.model.name,
    provider_model_slug: revision.providerModelSlug,
    configured_model_id: current.model.id,
    current_revision_id: revision.id,
    api_format: current.providerConfig.apiFormat,
    api_variant: revision.apiVariant,
    context_window_tokens: Math.min(revision.contextWindowTokens, overrides.context_window_tokens ?? Infinity),
    max_output_tokens: ceiling,
    default_max_output_tokens: perRequest,
    default_cache_retention: overrides.cache_retention ?? revision.defaultCacheRetention,
    supports_tools: revision.supportsTools,
    supports_reasoning: revision.supportsReasoning,
    default_reasoning_effort: revision.supportsReasoning
      ? overrides.reasoning_effort ?? revision.defaultReasoningEffort
      : revision.defaultReasoningEffort,
    supported_reasoning_efforts: revision.supportedReasoningEfforts,
    input_modalities: revision.inputModalities,
    output_modalities: revision.outputModalities
  }, { disableValidation: true })
}
