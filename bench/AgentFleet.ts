/**
 * A fleet of agents on a server started as a child process, driven through the typed client:
 * the crash loop (bench/crashLoop.ts) and the soak (bench/soak.ts) share it. One organization and
 * project, the scripted provider's model (test/support/ScriptedModel.ts), the shared test agent
 * config, and N agents; inputs, the full event timeline and every turn of an agent.
 */
import { Effect } from "effect"
import type { Client } from "../src/api/Client.ts"
import type { AgentId, OrgId, ProjectId, ToolCallId } from "../src/domain/shared/Ids.ts"
import type { AgentEvent } from "../src/domain/runtime/Events.ts"
import type { Turn } from "../src/domain/runtime/Turns.ts"
import { withClient } from "../test/support/Processes.ts"
import { agentSource, scriptedModel } from "../test/support/ScriptedModel.ts"

export interface Fleet {
  readonly projectPath: { readonly orgID: OrgId; readonly projectID: ProjectId }
  readonly agents: ReadonlyArray<AgentId>
}

/** A connection to the server at `baseUrl` as the bootstrap admin (`token`). */
export interface Connection {
  readonly baseUrl: string
  readonly token: string
}

const call = <A, E>(connection: Connection, f: (client: Client) => Effect.Effect<A, E>) =>
  withClient(connection.baseUrl, connection.token, f)

export const createFleet = (connection: Connection, providerUrl: string, slug: string, agents: number): Promise<Fleet> =>
  call(connection, (client) =>
    Effect.gen(function*() {
      const org = yield* client.organizations.create({ payload: { name: "Bench fleet" } })
      const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: "Fleet" } })
      const { model } = yield* scriptedModel(client, org.id, { format: "openai-responses", baseUrl: providerUrl, slug })
      yield* client.models.createGrant({ params: { orgID: org.id, modelID: model.id }, payload: { target_project_id: project.id } })
      const projectPath = { orgID: org.id, projectID: project.id }
      const config = yield* client.agentConfigs.create({
        params: projectPath,
        payload: { source: agentSource({ label: "fleet" }), source_format: "yaml" }
      })
      const launched = yield* Effect.forEach(
        Array.from({ length: agents }),
        () => client.agents.create({ params: projectPath, payload: { agent_config_id: config.id } }),
        { concurrency: 10 }
      )
      return { projectPath, agents: launched.map((agent) => agent.id) }
    }))

const agentPath = (fleet: Fleet, agentID: AgentId) => ({ ...fleet.projectPath, agentID })

/**
 * Sends a text input under an idempotency key; resolves with the input's turn id, or `undefined`
 * when no answer came (the server died meanwhile): sending it again with the same key is safe.
 */
export const sendInput = (connection: Connection, fleet: Fleet, agentID: AgentId, text: string, key: string) =>
  call(connection, (client) =>
    client.agents.sendInput({
      params: agentPath(fleet, agentID),
      payload: { content_blocks: [{ type: "text", text }], input_idempotency_key: key }
    }).pipe(
      Effect.map((accepted) => accepted.event.turn_id as string | undefined),
      Effect.catchTag("HttpClientError", () => Effect.succeed(undefined))
    ))

const agentOf = (connection: Connection, fleet: Fleet, agentID: AgentId) =>
  call(connection, (client) => client.agents.get({ params: agentPath(fleet, agentID) }))

/** The agent's timeline after the event numbered `after`, oldest first. */
const eventsAfter = (client: Client, fleet: Fleet, agentID: AgentId, after: number) =>
  Effect.gen(function*() {
    const events: Array<AgentEvent> = []
    for (;;) {
      const page = yield* client.agents.listEvents({ params: agentPath(fleet, agentID), query: { after_sequence: after, limit: 500 } })
      events.push(...page.data)
      after = page.next_after_sequence
      if (!page.has_more) return events
    }
  })

/** The agent's whole timeline, oldest first. */
export const allEvents = (connection: Connection, fleet: Fleet, agentID: AgentId) =>
  call(connection, (client) => eventsAfter(client, fleet, agentID, 0))

/** The agent's events after the one numbered `after`, or `undefined` when no answer came (no server is up). */
export const newEvents = (connection: Connection, fleet: Fleet, agentID: AgentId, after: number) =>
  call(connection, (client) =>
    eventsAfter(client, fleet, agentID, after).pipe(
      Effect.catchTag("HttpClientError", () => Effect.succeed(undefined))
    ))

/**
 * Submits a succeeded result for a ready custom tool call: `accepted`, `conflict` when the call no
 * longer takes one (409), or `undefined` when no answer came (the server died meanwhile).
 */
export const submitToolResult = (connection: Connection, fleet: Fleet, agentID: AgentId, toolCallID: ToolCallId, text: string) =>
  call(connection, (client) =>
    client.toolCalls.submitResult({
      params: { ...agentPath(fleet, agentID), toolCallID },
      payload: { outcome: "succeeded", content_blocks: [{ type: "text", text }] }
    }).pipe(
      Effect.as("accepted" as const),
      Effect.catchTag("StateTransitionConflict", () => Effect.succeed("conflict" as const)),
      Effect.catchTag("HttpClientError", () => Effect.succeed(undefined))
    ))

/** Every turn of the agent. */
export const allTurns = (connection: Connection, fleet: Fleet, agentID: AgentId) =>
  call(connection, (client) =>
    Effect.gen(function*() {
      const turns: Array<Turn> = []
      let cursor: string | undefined
      for (;;) {
        const page = yield* client.agents.listTurns({
          params: agentPath(fleet, agentID),
          query: cursor === undefined ? { limit: 100 } : { limit: 100, cursor }
        })
        turns.push(...page.data)
        if (!page.has_more || page.next_cursor === null) return turns
        cursor = page.next_cursor
      }
    }))

/** Polls until every agent is idle with no current turn; returns the agents still busy at `timeoutMs`. */
export const settle = async (connection: Connection, fleet: Fleet, timeoutMs: number): Promise<ReadonlyArray<AgentId>> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const agents = await Promise.all(fleet.agents.map((agentID) => agentOf(connection, fleet, agentID)))
    const busy = agents.filter((agent) => agent.status !== "idle" || agent.current_turn_id !== null).map((agent) => agent.id)
    if (busy.length === 0 || Date.now() > deadline) return busy
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}
