/**
 * What a turn's model requests are made of (docs/runtime.md, "The model request"): the agent's
 * compiled config, its model's current revision and credential, the texts of its skills, and the
 * context budget. Read at each model call, so a turn follows a model's new revision, its provider
 * config's changes, its secret's rotation and the revocation of the model's grant to the project
 * (the credential is opened again only when the model's read finds its secret's value changed:
 * Secrets.revealCurrent); a compiled config is never changed nor deleted, so it is read once and
 * remembered (COMPILED_CACHE_SIZE configs, least recently used forgotten).
 */
import { type MachineTarget, machineTargetOf } from "../../domain/machines/MachineTarget.ts"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import type { CompiledAgentConfig, CompiledSkill, CompiledTool } from "../../domain/configuration/agent-config/Compiled.ts"
import { AgentConfigId, ConfiguredModelId, ProjectId } from "../../domain/shared/Ids.ts"
import type { Agent } from "../../domain/runtime/Agents.ts"
import { AgentConfigsRepository } from "../configuration/AgentConfigsRepository.ts"
import { Models } from "../configuration/Models.ts"
import { Secrets } from "../configuration/Secrets.ts"
import { SkillsRepository } from "../configuration/SkillsRepository.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { type Budget, budgetOf } from "./ContextBudget.ts"
import type { ModelRequest } from "./model/ModelMessages.ts"
import { toolDefinitions } from "./ToolDefinitions.ts"

/** The settings of a turn's model requests. */
export interface TurnSetup {
  readonly projectId: ProjectId
  readonly tools: Readonly<Record<string, CompiledTool>>
  readonly base: Omit<ModelRequest, "conversation">
  readonly budget: Budget
  /** Where the built-in machine tools run, when the config names a machine. */
  readonly machine: MachineTarget | null
}

/** A turn cannot run because what its agent's config names is gone; the turn fails with the message. */
class AgentConfigGone extends Schema.TaggedError<AgentConfigGone>()("AgentConfigGone", {
  agent_config_id: AgentConfigId
}) {
  override get message() {
    return `The agent config ${this.agent_config_id} no longer exists.`
  }
}

class ConfiguredModelGone extends Schema.TaggedError<ConfiguredModelGone>()("ConfiguredModelGone", {
  configured_model_id: ConfiguredModelId
}) {
  override get message() {
    return `The configured model ${this.configured_model_id} of this agent's config no longer exists.`
  }
}

class ModelNotGranted extends Schema.TaggedError<ModelNotGranted>()("ModelNotGranted", {
  model: Schema.String,
  project_id: ProjectId
}) {
  override get message() {
    return `The model ${this.model} of this agent's config is no longer granted to project ${this.project_id}; ` +
      "an organization admin can grant it again (POST /orgs/{orgID}/models/{modelID}/grants)."
  }
}

class ApiKeySecretGone extends Schema.TaggedError<ApiKeySecretGone>()("ApiKeySecretGone", {
  provider_config: Schema.String
}) {
  override get message() {
    return `The API key secret of the model provider config ${this.provider_config} no longer exists.`
  }
}

/** What a turn's setup needs of its agent: what never changes in an agent's life (docs/agents-api.md). */
export type AgentIdentity = Pick<Agent, "id" | "agent_config_id" | "project_id">

/** Compiled agent configs remembered at most. */
const COMPILED_CACHE_SIZE = 1000

export type TurnSetupFailure = AgentConfigGone | ConfiguredModelGone | ModelNotGranted | ApiKeySecretGone

const skillsSection = (skills: ReadonlyArray<{ readonly name: string; readonly text: string }>) =>
  skills.length === 0
    ? ""
    : "\n\n# Skills\n" + skills.map((skill) => `\n## ${skill.name}\n\n${skill.text}`).join("\n")

const make = Effect.gen(function*() {
  const configs = yield* AgentConfigsRepository
  const skills = yield* SkillsRepository
  const models = yield* Models
  const secrets = yield* Secrets

  /** The SKILL.md texts of the config's skills, in the config's order (a deleted skill is left out). */
  const skillTexts = (compiled: ReadonlyArray<CompiledSkill>) =>
    Effect.map(skills.mainTexts(compiled), (found) => {
      const texts = new Map(found.map((version) => [`${version.skill_id}@${version.version}`, version.text]))
      return compiled.flatMap((skill) => {
        const text = texts.get(`${skill.skill_id}@${skill.version}`)
        return text === undefined ? [] : [{ name: skill.name, text }]
      })
    })

  /** Least recently used first. */
  const compiledConfigs = new Map<AgentConfigId, CompiledAgentConfig>()

  /** The compiled definition of the config, from memory when it was read before. */
  const compiledDefinition = (configId: AgentConfigId) => {
    const remembered = compiledConfigs.get(configId)
    if (remembered !== undefined) {
      compiledConfigs.delete(configId)
      compiledConfigs.set(configId, remembered)
      return Effect.succeed(Option.some(remembered))
    }
    return Effect.tap(configs.compiledDefinition(configId), (found) =>
      Effect.sync(() => {
        if (Option.isNone(found)) return
        compiledConfigs.set(configId, found.value)
        if (compiledConfigs.size > COMPILED_CACHE_SIZE) compiledConfigs.delete(compiledConfigs.keys().next().value!)
      }))
  }

  /** The setup of the agent's next model request. */
  const of = (agent: AgentIdentity): Effect.Effect<TurnSetup, TurnSetupFailure> =>
    Effect.gen(function*() {
      const compiled = yield* compiledDefinition(agent.agent_config_id).pipe(
        someOrFail(() => new AgentConfigGone({ agent_config_id: agent.agent_config_id }))
      )
      const modelId = compiled.model.configured_model_id
      const configSkills = compiled.skills ?? []
      // The skills' texts are read beside the model (on Postgres the two reads share a round trip).
      const [{ authSecretVersion, granted, model }, texts] = yield* Effect.all([
        models.current(modelId, agent.project_id).pipe(
          replaceFailure("NotFound", () => new ConfiguredModelGone({ configured_model_id: modelId }), "Debug")
        ),
        skillTexts(configSkills)
      ], { concurrency: configSkills.length === 0 ? 1 : 2 })
      if (!granted) return yield* Effect.fail(new ModelNotGranted({ model: model.model.name, project_id: agent.project_id }))
      const authSecretId = model.providerConfig.authSecretId
      const secretGone = () => new ApiKeySecretGone({ provider_config: model.providerConfig.name })
      const apiKey = authSecretId === null
        ? Redacted.make("")
        : authSecretVersion === null
        ? yield* Effect.fail(secretGone())
        : yield* secrets.revealCurrent(authSecretId, authSecretVersion).pipe(replaceFailure("NotFound", secretGone, "Debug"))
      const tools = compiled.tools ?? {}
      const maxOutputTokens = compiled.model.default_max_output_tokens ?? model.revision.defaultMaxOutputTokens ?? undefined
      const reasoningEffort = model.revision.supportsReasoning
        ? compiled.model.reasoning.effort ?? model.revision.defaultReasoningEffort
        : undefined
      return {
        projectId: agent.project_id,
        tools,
        base: {
          apiFormat: model.providerConfig.apiFormat,
          baseUrl: model.providerConfig.baseUrl,
          apiKey,
          apiKeySecretId: authSecretId ?? undefined,
          model: model.revision.providerModelSlug,
          instruction: compiled.instruction + skillsSection(texts),
          tools: model.revision.supportsTools ? toolDefinitions(tools) : [],
          maxOutputTokens,
          reasoningEffort,
          cacheRetention: compiled.model.cache_retention,
          conversationKey: agent.id
        },
        budget: budgetOf(compiled.model.context_window_tokens, maxOutputTokens),
        machine: machineTargetOf(compiled)
      }
    })

  return { of } as const
})

export class TurnSetups extends Context.Service<TurnSetups, Effect.Success<typeof make>>()("TurnSetups") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      AgentConfigsRepository.layer,
      SkillsRepository.layer,
      Models.layer,
      Secrets.layer
    ])
  )
}
