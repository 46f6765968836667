/**
 * The overrides a config's model reference sets: they may only narrow the configured
 * model. A config keeps them, so that its model is rendered from every later revision too.
 */
import { Schema } from "effect"
import { optional } from "../../shared/Optional.ts"
import { CacheRetention, type ResolvedModel } from "../Models.ts"
import type { ModelReference } from "./Definition.ts"

export const ModelOverrides = Schema.Struct({
  context_window_tokens: optional(Schema.Int),
  max_output_tokens: optional(Schema.Int),
  cache_retention: optional(CacheRetention),
  reasoning_effort: optional(Schema.String)
})
export type ModelOverrides = typeof ModelOverrides.Type

export const overridesOf = (ref: ModelReference): ModelOverrides => ({
  ...(ref.context_window_tokens === undefined ? {} : { context_window_tokens: ref.context_window_tokens }),
  ...(ref.max_output_tokens === undefined ? {} : { max_output_tokens: ref.max_output_tokens }),
  ...(ref.cache_retention === undefined ? {} : { cache_retention: ref.cache_retention }),
  ...(ref.reasoning === undefined ? {} : { reasoning_effort: ref.reasoning.effort })
})

/** The output cap per request: the override, else the revision's default, never above the ceiling. */
export const effectiveOutputTokens = (revision: ResolvedModel["revision"], overrides: ModelOverrides) => {
  const ceiling = overrides.max_output_tokens !== undefined && revision.maxOutputTokens !== null
    ? Math.min(overrides.max_output_tokens, revision.maxOutputTokens)
    : overrides.max_output_tokens ?? revision.maxOutputTokens
  const perRequest = revision.defaultMaxOutputTokens === null
    ? overrides.max_output_tokens ?? null
    : ceiling === null
    ? revision.defaultMaxOutputTokens
    : Math.min(revision.defaultMaxOutputTokens, ceiling)
  return { ceiling, perRequest }
}
