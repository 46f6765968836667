/** Compiling a model reference: it must resolve, and its overrides may only narrow the model. */
import type { ResolvedModel } from "../Models.ts"
import type { CompiledAgentModel } from "./Compiled.ts"
import type { CompileContext, Path } from "./CompileContext.ts"
import type { ModelReference } from "./Definition.ts"
import { effectiveOutputTokens, type ModelOverrides, overridesOf } from "./ModelOverrides.ts"
import { modelKey } from "./References.ts"

export interface CompiledModel {
  readonly model: ResolvedModel
  readonly compiled: CompiledAgentModel
  readonly overrides: ModelOverrides
}

const narrowingProblems = (context: CompileContext, path: Path, ref: ModelReference, model: ResolvedModel) => {
  const revision = model.revision
  if (ref.context_window_tokens !== undefined && ref.context_window_tokens > revision.contextWindowTokens) {
    context.problem(
      [...path, "context_window_tokens"],
      `must be at most ${revision.contextWindowTokens}, the context window of model "${ref.name}"; an override may only narrow it`
    )
  }
  const contextWindow = ref.context_window_tokens ?? revision.contextWindowTokens
  if (ref.max_output_tokens !== undefined) {
    if (revision.maxOutputTokens !== null && ref.max_output_tokens > revision.maxOutputTokens) {
      context.problem(
        [...path, "max_output_tokens"],
        `must be at most ${revision.maxOutputTokens}, the output limit of model "${ref.name}"; an override may only narrow it`
      )
    } else if (ref.max_output_tokens >= contextWindow) {
      context.problem([...path, "max_output_tokens"], `must be less than the context window (${contextWindow})`)
    }
  }
  if (ref.reasoning !== undefined) {
    if (!revision.supportsReasoning) {
      context.problem([...path, "reasoning"], `model "${ref.name}" does not support reasoning; remove reasoning`)
    } else if (!revision.supportedReasoningEfforts.includes(ref.reasoning.effort)) {
      context.problem(
        [...path, "reasoning", "effort"],
        `must be one of the efforts model "${ref.name}" supports: ${revision.supportedReasoningEfforts.join(", ")}`
      )
    }
  }
}

/** The compiled model of `ref`, or undefined (with problems recorded) when it does not resolve or fit. */
export const compileModel = (context: CompileContext, path: Path, ref: ModelReference): CompiledModel | undefined => {
  const model = context.resolutions.models.get(modelKey(ref))
  if (model === undefined && !context.resolutions.providerConfigs.has(ref.provider_config)) {
    context.problem(
      [...path, "provider_config"],
      `no model provider config "${ref.provider_config}" in this organization; check the name`
    )
    return undefined
  }
  if (model === undefined) {
    context.problem(
      [...path, "name"],
      `no model "${ref.name}" of provider config "${ref.provider_config}" is granted to this project; ` +
        "check both names, or grant the model to the project"
    )
    return undefined
  }
  context.resolved(path, model.model.id)
  const before = context.problemCount()
  narrowingProblems(context, path, ref, model)
  if (context.problemCount() > before) return undefined
  const revision = model.revision
  const overrides = overridesOf(ref)
  const { perRequest } = effectiveOutputTokens(revision, overrides)
  const compiled: CompiledAgentModel = {
    configured_model_id: model.model.id,
    context_window_tokens: ref.context_window_tokens ?? revision.contextWindowTokens,
    ...(perRequest === null ? {} : { default_max_output_tokens: perRequest }),
    cache_retention: ref.cache_retention ?? revision.defaultCacheRetention,
    reasoning: revision.supportsReasoning
      ? { effort: ref.reasoning?.effort ?? revision.defaultReasoningEffort }
      : {}
  }
  return { model, compiled, overrides }
}
