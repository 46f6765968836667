/**
 * The `model` of an agent config as the API shows it (AgentConfigModel): rendered at
 * response time from the configured model's current revision and names, narrowed by the
 * config's overrides, so a config follows its model's later revisions.
 */
import { AgentConfigModel } from "../../domain/configuration/agent-config/AgentConfig.ts"
import { effectiveOutputTokens, type ModelOverrides } from "../../domain/configuration/agent-config/ModelOverrides.ts"
import type { ResolvedModel } from "../../domain/configuration/Models.ts"

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
  })
}
