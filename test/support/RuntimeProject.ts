/**
 * Set-up for the runtime tests (test/runtime): an owner with an organization and a project, a
 * model provider config of one wire format pointing at the scripted provider, a model with its
 * own slug (so concurrent tests never take each other's scripted replies), an agent config and
 * helpers to launch agents, send inputs and wait for turns.
 *
 * The config offers a custom tool `lookup` (allowed), a custom tool `deploy` (asks for approval),
 * `ask_question`, and the built-in `read_file` set to `ask` (no machine: its call fails).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import type { AgentId, ToolCallId, TurnId } from "../../src/domain/shared/Ids.ts"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"
import type { Client } from "../../src/api/Client.ts"
import { eventually } from "./Polling.ts"
import { Reply, type ScriptedProviderShape } from "./ScriptedProvider.ts"
import { agentSource, scriptedModel } from "./ScriptedModel.ts"
import { newUser } from "./TestApp.ts"

export interface RuntimeProjectOptions {
  readonly format?: ApiFormat
  readonly contextWindow?: number
  readonly maxOutputTokens?: number
  /** `model:` lines added to the config source (cache_retention, reasoning). */
  readonly modelLines?: ReadonlyArray<string>
  readonly supportsReasoning?: boolean
  /** Extra lines at the end of the config source. */
  readonly extraSource?: ReadonlyArray<string>
  /** Project skills created first and listed, in this order, in the config's `skills`. */
  readonly skills?: ReadonlyArray<{ readonly name: string; readonly text: string; readonly files?: Readonly<Record<string, string>> }>
}

/** Text content blocks. */
export const text = (value: string) => [{ type: "text" as const, text: value }]

/** The token of the wait for a tool call's result, as its row holds it (the test app's database). */
export const deferredTokenOf = (toolCallId: ToolCallId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ deferred_token: string }>`SELECT deferred_token FROM tool_calls WHERE id = ${toolCallId}`.pipe(
      Effect.map((rows) => rows[0].deferred_token)
    ))

export const runtimeProject = (provider: ScriptedProviderShape, options: RuntimeProjectOptions = {}) =>
  Effect.gen(function*() {
    const format = options.format ?? "openai-responses"
    const slug = `scripted-${randomBytes(6).toString("hex")}`
    const owner = yield* newUser("runtime")
    const client: Client = owner.client
    const org = yield* client.organizations.create({ payload: { name: "Runtime" } })
    const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
    const { model } = yield* scriptedModel(client, org.id, {
      format,
      baseUrl: provider.baseUrl(format),
      slug,
      ...(options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow }),
      ...(options.maxOutputTokens === undefined ? {} : { defaultMaxOutputTokens: options.maxOutputTokens }),
      ...(options.supportsReasoning === undefined ? {} : { supportsReasoning: options.supportsReasoning })
    })
    yield* client.models.createGrant({ params: { orgID: org.id, modelID: model.id }, payload: { target_project_id: project.id } })
    const skills = yield* Effect.forEach(options.skills ?? [], (skill) =>
      client.skills.create({
        params: { orgID: org.id },
        payload: {
          name: skill.name,
          description: "A test skill",
          owner_project_id: project.id,
          content: { "SKILL.md": skill.text, ...(skill.files === undefined ? {} : { files: skill.files }) }
        }
      }))
    const config = yield* client.agentConfigs.create({
      params: { orgID: org.id, projectID: project.id },
      payload: {
        source: agentSource({
          label: "runtime",
          ...(options.modelLines === undefined ? {} : { modelLines: options.modelLines }),
          ...(options.extraSource === undefined ? {} : { extraSource: options.extraSource }),
          ...(skills.length === 0 ? {} : { skills: skills.map((skill) => skill.name) })
        }),
        source_format: "yaml"
      }
    })
    const projectPath = { orgID: org.id, projectID: project.id }
    const agentPath = (agentID: AgentId) => ({ ...projectPath, agentID })

    const launch = () => client.agents.create({ params: projectPath, payload: { agent_config_id: config.id } })
    const send = (agentID: AgentId, content: string, key?: string) =>
      client.agents.sendInput({
        params: agentPath(agentID),
        payload: { content_blocks: text(content), ...(key === undefined ? {} : { input_idempotency_key: key }) }
      })
    const events = (agentID: AgentId) =>
      client.agents.listEvents({ params: agentPath(agentID), query: { limit: 500 } }).pipe(Effect.map((page) => page.data))
    const agent = (agentID: AgentId) => client.agents.get({ params: agentPath(agentID) })
    /** Waits until the agent is idle with no current turn. */
    const idle = (agentID: AgentId, timeout: `${number} seconds` = "15 seconds") =>
      eventually(agent(agentID), (a) => a.status === "idle" && a.current_turn_id === null, `agent ${agentID} idle`, timeout)
    const waiting = (agentID: AgentId) => eventually(agent(agentID), (a) => a.status === "waiting", `agent ${agentID} waiting`)
    const toolCalls = (agentID: AgentId) =>
      client.toolCalls.list({ params: agentPath(agentID), query: {} }).pipe(Effect.map((page) => page.data))
    const interactions = (agentID: AgentId) =>
      client.interactions.listForAgent({ params: agentPath(agentID), query: {} }).pipe(Effect.map((page) => page.data))

    return {
      owner,
      client,
      org,
      project,
      model,
      skills,
      config,
      slug,
      format,
      projectPath,
      agentPath,
      launch,
      send,
      events,
      agent,
      idle,
      waiting,
      toolCalls,
      interactions
    }
  })

export type RuntimeProject = Effect.Success<ReturnType<typeof runtimeProject>>

/**
 * A new project's agent whose turn ("Check the status") called the custom tool `lookup` and waits
 * for its result; the model answers "All green." after it. The project, the agent, the turn's
 * workflow payload and the call.
 */
export const turnAwaitingLookup = (provider: ScriptedProviderShape) =>
  Effect.gen(function*() {
    const rt = yield* runtimeProject(provider)
    yield* provider.script([Reply.toolCall("lookup", { query: "status" }), Reply.text("All green.")], { model: rt.slug })
    const agent = yield* rt.launch()
    const accepted = yield* rt.send(agent.id, "Check the status")
    yield* rt.waiting(agent.id)
    const [call] = yield* rt.toolCalls(agent.id)
    return { rt, agent, payload: { turn_id: accepted.event.turn_id as TurnId, agent_id: agent.id }, call }
  })

/**
 * An agent config of the project whose `run_command` runs without approval on `source`: a
 * machine (by id or name) in a directory of it, or a machine of a pool.
 */
export const commandConfig = (
  rt: RuntimeProject,
  source: { readonly machine: string; readonly cwd: string } | { readonly pool: string }
) =>
  rt.client.agentConfigs.create({
    params: rt.projectPath,
    payload: {
      source_format: "yaml",
      source: [
        "instruction: Work on the machine.",
        "model: { provider_config: Scripted, name: Scripted model }",
        "tools:",
        "  run_command: { permission: allow }",
        "machine_sources:",
        ...("pool" in source ? [`  - machine_pool_id: ${source.pool}`] : [`  - machine_id: ${source.machine}`, `    cwd: ${source.cwd}`]),
        ""
      ].join("\n")
    }
  })
