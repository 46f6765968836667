/**
 * The rules of a model revision's settings that no single field can check alone, and the
 * defaults of the optional ones (docs/models.md).
 */
import { Effect } from "effect"
import { InvalidRequest, type Issue } from "../shared/Errors.ts"
import {
  DEFAULT_API_VARIANT,
  DEFAULT_REASONING_EFFORT,
  DEFAULT_REASONING_EFFORTS,
  type ModelSettings,
  type ModelSettingsInput,
  NO_REASONING_EFFORT,
  type UpdateConfiguredModel
} from "./Models.ts"

const outputLimitIssues = (input: ModelSettingsInput): Array<Issue> => {
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
  return issues
}

const reasoningIssues = (supportsReasoning: boolean, efforts: ReadonlyArray<string>, defaultEffort: string) => {
  const issues: Array<Issue> = []
  if (new Set(efforts).size !== efforts.length) {
    issues.push({ path: "/supported_reasoning_efforts", message: "must not list an effort twice" })
  }
  if (supportsReasoning) {
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
  return issues
}

/**
 * Fills the defaults of a revision and checks what no single field can check alone; every
 * problem is one issue. Reasoning models default to efforts low, medium, high (default medium);
 * a model without reasoning has no efforts and the default effort "none".
 */
export const completeSettings = (input: ModelSettingsInput): Effect.Effect<ModelSettings, InvalidRequest> => {
  const efforts = input.supported_reasoning_efforts ?? (input.supports_reasoning ? DEFAULT_REASONING_EFFORTS : [])
  const defaultEffort = input.default_reasoning_effort ??
    (!input.supports_reasoning
      ? NO_REASONING_EFFORT
      : efforts.includes(DEFAULT_REASONING_EFFORT)
      ? DEFAULT_REASONING_EFFORT
      : efforts[0] ?? DEFAULT_REASONING_EFFORT)
  const issues = [...outputLimitIssues(input), ...reasoningIssues(input.supports_reasoning, efforts, defaultEffort)]
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
    context_window_tokens: input.context_window_tokens,
    max_output_tokens: input.max_output_tokens ?? null,
    default_max_output_tokens: input.default_max_output_tokens ?? null,
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
export const patchedSettings = (current: ModelSettings, patch: UpdateConfiguredModel): ModelSettingsInput => {
  const reasoningChanged = patch.supports_reasoning !== undefined && patch.supports_reasoning !== current.supports_reasoning
  const { name: _, ...fields } = patch
  const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))
  return {
    ...current,
    ...(reasoningChanged ? { supported_reasoning_efforts: undefined, default_reasoning_effort: undefined } : {}),
    ...defined
  }
}
