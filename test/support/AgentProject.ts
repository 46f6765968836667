/**
 * Set-up for the agents API tests: an owner with an organization, a project (and a second one
 * for isolation checks), a model provider config pointing at `baseUrl` (the scripted provider in
 * tests that run turns), a model granted to the project, and an agent config with a custom tool
 * `lookup` (allowed), a custom tool `deploy` (asks for approval) and the built-in tools.
 */
import { Effect, Redacted } from "effect"
import type { ApiFormat } from "../../src/domain/Models.ts"
import { newUser } from "./TestApp.ts"

export interface AgentProjectOptions {
  readonly label?: string
  readonly format?: ApiFormat
  /** The provider's base URL (default: an address nothing listens on, for tests that run no turn). */
  readonly baseUrl?: string
  /** The provider's model slug (the scripted provider queues replies per slug). */
  readonly slug?: string
}

export const agentConfigSource = (label: string) => [
  `instruction: You are the ${label} test agent.`,
  "model:",
  "  provider_config: Scripted",
  "  name: Scripted model",
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
  ""
].join("\n")

export const agentProject = (options: AgentProjectOptions = {}) =>
  Effect.gen(function*() {
    const label = options.label ?? "Agents"
    const format = options.format ?? "openai-responses"
    const owner = yield* newUser("owner")
    const org = yield* owner.client.organizations.create({ payload: { name: label } })
    const project = yield* owner.client.projects.create({ path: { orgID: org.id }, payload: { name: "Main" } })
    const otherProject = yield* owner.client.projects.create({ path: { orgID: org.id }, payload: { name: "Other" } })
    const secret = yield* owner.client.secrets.create({
      path: { orgID: org.id },
      payload: { name: "Provider key", value: Redacted.make("sk-test-key") }
    })
    const provider = yield* owner.client.modelProviderConfigs.create({
      path: { orgID: org.id },
      payload: {
        name: "Scripted",
        api_format: format,
        base_url: options.baseUrl ?? "http://127.0.0.1:9/v1",
        auth_secret_id: secret.id
      }
    })
    const model = yield* owner.client.models.create({
      path: { orgID: org.id },
      payload: {
        provider_config_id: provider.id,
        name: "Scripted model",
        provider_model_slug: options.slug ?? "scripted-1",
        context_window_tokens: 200_000,
        max_output_tokens: 8_000,
        default_max_output_tokens: 1_000,
        supports_tools: true,
        supports_reasoning: false,
        input_modalities: ["text", "image"],
        output_modalities: ["text"]
      }
    })
    for (const target of [project, otherProject]) {
      yield* owner.client.models.createGrant({
        path: { orgID: org.id, modelID: model.id },
        payload: { target_project_id: target.id }
      })
    }
    const config = yield* owner.client.agentConfigs.create({
      path: { orgID: org.id, projectID: project.id },
      payload: { source: agentConfigSource(label), source_format: "yaml" }
    })
    const projectPath = { orgID: org.id, projectID: project.id }
    const launch = (payload: { readonly name?: string; readonly metadata?: Record<string, unknown> } = {}) =>
      owner.client.agents.create({ path: projectPath, payload: { agent_config_id: config.id, ...payload } })
    return { owner, org, project, otherProject, provider, model, config, projectPath, launch }
  })

export type AgentProject = Effect.Effect.Success<ReturnType<typeof agentProject>>
