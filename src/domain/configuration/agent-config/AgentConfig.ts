/**
 * The AgentConfig resource, its rendered model (AgentConfigModel) and the
 * body of createAgentConfig.
 */
import { Schema } from "effect"
import { optional } from "../../shared/Optional.ts"
import { AgentConfigId, ConfiguredModelId, ModelRevisionId, OrgId, ProjectId } from "../../shared/Ids.ts"
import { Sha256Digest } from "../../shared/Sha256Digest.ts"
import { Timestamp } from "../../shared/Timestamp.ts"
import { ApiFormat } from "../ModelProviderConfigs.ts"
import { ModelSettings } from "../Models.ts"
import { CompiledAgentConfig } from "./Compiled.ts"

export const SourceFormat = Schema.Literals(["yaml", "json"])

const settings = ModelSettings.fields

/** The model's settings as the config narrows them, with the names of the model and its provider config. */
export class AgentConfigModel extends Schema.Class<AgentConfigModel>("AgentConfigModel")({
  provider_config: Schema.String,
  name: Schema.String,
  provider_model_slug: settings.provider_model_slug,
  configured_model_id: ConfiguredModelId,
  current_revision_id: ModelRevisionId,
  api_format: ApiFormat,
  api_variant: settings.api_variant,
  context_window_tokens: settings.context_window_tokens,
  max_output_tokens: settings.max_output_tokens,
  default_max_output_tokens: optional(settings.default_max_output_tokens),
  default_cache_retention: settings.default_cache_retention,
  supports_tools: settings.supports_tools,
  supports_reasoning: settings.supports_reasoning,
  default_reasoning_effort: settings.default_reasoning_effort,
  supported_reasoning_efforts: settings.supported_reasoning_efforts,
  input_modalities: settings.input_modalities,
  output_modalities: settings.output_modalities
}) {}

export class AgentConfig extends Schema.Class<AgentConfig>("AgentConfig")({
  id: AgentConfigId,
  org_id: OrgId,
  project_id: ProjectId,
  source: optional(Schema.String),
  source_format: optional(SourceFormat),
  effective_definition_hash: Sha256Digest,
  model: AgentConfigModel,
  instruction_hash: optional(Sha256Digest),
  created_at: Timestamp,
  compiled_definition: CompiledAgentConfig
}) {}

const AgentConfigDefinitionObject = Schema.Record(Schema.String, Schema.Unknown).annotate({
  identifier: "AgentConfigDefinitionObject",
  description: "An AgentConfigDefinition as a JSON object; checked like a source text, with issues " +
    "positioned in the stored canonical JSON"
})

export const CreateAgentConfig = Schema.Struct({
  source: Schema.Union([
    Schema.String.pipe(Schema.check(Schema.isMinLength(1, { message: "must not be empty" }))),
    AgentConfigDefinitionObject
  ]).annotate({ description: "YAML or JSON text, or (with source_format json) the definition as an object" }),
  source_format: SourceFormat
})
export type CreateAgentConfig = typeof CreateAgentConfig.Type
