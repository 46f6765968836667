/**
 * Set-up for the agents API tests: an owner with an organization, a project (and a second one
 * for isolation checks), a model provider config pointing at `baseUrl` (the scripted provider in
 * tests that run turns), a model granted to the project, and an agent config with a custom tool
 * `lookup` (allowed), a custom tool `deploy` (asks for approval) and the built-in tools.
 */
import { Effect } from "effect"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"
import { agentSource, scriptedModel } from "./ScriptedModel.ts"
import { newUser } from "./TestApp.ts"

export interface AgentProjectOptions {
  readonly label?: string
  readonly format?: ApiFormat
  /** The provider's base URL (default: an address nothing listens on, for tests that run no turn). */
  readonly baseUrl?: string
  /** The provider's model slug (the scripted provider queues replies per slug). */
  readonly slug?: string
}

export const agentProject = (options: AgentProjectOptions = {}) =>
  Effect.gen(function*() {
    const label = options.label ?? "Agents"
    const format = options.format ?? "openai-responses"
    const owner = yield* newUser("owner")
    const org = yield* owner.client.organizations.create({ payload: { name: label } })
    const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
    const otherProject = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Other" } })
    const { model, provider } = yield* scriptedModel(owner.client, org.id, {
      format,
      baseUrl: options.baseUrl ?? "http://127.0.0.1:9/v1",
      slug: options.slug ?? "scripted-1",
      inputModalities: ["text", "image"]
    })
    for (const target of [project, otherProject]) {
      yield* owner.client.models.createGrant({
        params: { orgID: org.id, modelID: model.id },
        payload: { target_project_id: target.id }
      })
    }
    const config = yield* owner.client.agentConfigs.create({
      params: { orgID: org.id, projectID: project.id },
      payload: { source: agentSource({ label }), source_format: "yaml" }
    })
    const projectPath = { orgID: org.id, projectID: project.id }
    const launch = (payload: { readonly name?: string; readonly metadata?: Record<string, unknown> } = {}) =>
      owner.client.agents.create({ params: projectPath, payload: { agent_config_id: config.id, ...payload } })
    return { owner, org, project, otherProject, provider, model, config, projectPath, launch }
  })

export type AgentProject = Effect.Success<ReturnType<typeof agentProject>>
