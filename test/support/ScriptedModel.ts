/**
 * What every test that runs agents needs in its organization: the provider's key in a secret, a
 * provider config named "Scripted" of one wire format at the scripted provider's address, and a
 * model "Scripted model" on it; and the agent config source the runtime and agents API tests
 * share: custom tools `lookup` (allowed) and `deploy` (asks for approval), plus the built-ins.
 */
import { Effect, Redacted } from "effect"
import type { Client } from "../../src/api/Client.ts"
import type { OrgId } from "../../src/domain/shared/Ids.ts"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"

export interface ScriptedModelOptions {
  readonly format: ApiFormat
  readonly baseUrl: string
  /** The model slug: the scripted provider queues replies per slug. */
  readonly slug: string
  readonly contextWindow?: number
  readonly defaultMaxOutputTokens?: number
  readonly supportsReasoning?: boolean
  readonly inputModalities?: ReadonlyArray<string>
}

export const scriptedModel = (client: Client, orgID: OrgId, options: ScriptedModelOptions) =>
  Effect.gen(function*() {
    const contextWindow = options.contextWindow ?? 200_000
    const secret = yield* client.secrets.create({
      params: { orgID },
      payload: { name: "Provider key", value: Redacted.make("sk-scripted-key") }
    })
    const provider = yield* client.modelProviderConfigs.create({
      params: { orgID },
      payload: { name: "Scripted", api_format: options.format, base_url: options.baseUrl, auth_secret_id: secret.id }
    })
    const model = yield* client.models.create({
      params: { orgID },
      payload: {
        provider_config_id: provider.id,
        name: "Scripted model",
        provider_model_slug: options.slug,
        context_window_tokens: contextWindow,
        max_output_tokens: Math.min(8_000, contextWindow),
        default_max_output_tokens: options.defaultMaxOutputTokens ?? 1_000,
        supports_tools: true,
        supports_reasoning: options.supportsReasoning ?? false,
        ...(options.supportsReasoning === true
          ? { default_reasoning_effort: "medium", supported_reasoning_efforts: ["low", "medium", "high"] }
          : {}),
        input_modalities: options.inputModalities ?? ["text"],
        output_modalities: ["text"]
      }
    })
    return { secret, provider, model }
  })

export interface AgentSourceOptions {
  readonly label: string
  /** `model:` lines added to the config source (cache_retention, reasoning). */
  readonly modelLines?: ReadonlyArray<string>
  /** Extra lines at the end of the config source. */
  readonly extraSource?: ReadonlyArray<string>
  /** Skill names listed in the config's `skills`. */
  readonly skills?: ReadonlyArray<string>
}

export const agentSource = (options: AgentSourceOptions) => [
  `instruction: You are the ${options.label} test agent.`,
  "model:",
  "  provider_config: Scripted",
  "  name: Scripted model",
  ...(options.modelLines ?? []).map((line) => `  ${line}`),
  "tools:",
  "  lookup:",
  "    type: custom",
  "    description: Looks a thing up",
  "    input_schema: { type: object, properties: { query: { type: string } } }",
  "  deploy:",
  "    type: custom",
  "    description: Deploys",
  "    input_schema: { type: object }",
  "    permission: ask",
  ...(options.extraSource ?? []),
  ...(options.skills === undefined || options.skills.length === 0
    ? []
    : ["skills:", ...options.skills.map((name) => `  - name: ${name}`)]),
  ""
].join("\n")

export interface ScriptedProjectOptions {
  /** The organization's name. */
  readonly name: string
  /** The agent config's label (agentSource). */
  readonly label: string
  /** The scripted provider's openai-responses address. */
  readonly baseUrl: string
  readonly slug: string
}

/**
 * A new organization with a project "Main", the scripted model (openai-responses, `slug`) granted
 * to it, and an agent config of the shared test source: what the tests that run agents on server
 * processes start from.
 */
export const scriptedProject = (client: Client, options: ScriptedProjectOptions) =>
  Effect.gen(function*() {
    const org = yield* client.organizations.create({ payload: { name: options.name } })
    const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
    const { model } = yield* scriptedModel(client, org.id, { format: "openai-responses", baseUrl: options.baseUrl, slug: options.slug })
    yield* client.models.createGrant({ params: { orgID: org.id, modelID: model.id }, payload: { target_project_id: project.id } })
    const config = yield* client.agentConfigs.create({
      params: { orgID: org.id, projectID: project.id },
      payload: { source: agentSource({ label: options.label }), source_format: "yaml" }
    })
    return { projectPath: { orgID: org.id, projectID: project.id }, configId: config.id }
  })
