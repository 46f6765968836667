/**
 * A wait handed over in memory across processes (docs/runtime.md, "A wait handed over in memory"):
 * two server processes on one Postgres, twelve agents whose turns each call the custom tool; each
 * result is posted through the second process as soon as its call is ready, while the turn's
 * workflow waits in memory on whichever process holds its shard (about half of them on the first).
 * A result committed by the other process wakes the waiting workflow through the agent's event
 * notification, so every turn goes on at once, none after waiting out IN_MEMORY_WAIT for its
 * durable signal. Every turn completes with its events once and two model calls.
 *
 * Postgres only: the embedded database is one process.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { randomBytes } from "node:crypto"
import type { Client } from "../../src/api/Client.ts"
import type { AgentId } from "../../src/domain/shared/Ids.ts"
import { IN_MEMORY_WAIT } from "../../src/services/runtime/TurnWaits.ts"
import { waitForShards } from "../support/ClusterShards.ts"
import { eventually } from "../support/Polling.ts"
import {
  killLeftoverServers,
  makeDataDir,
  makeTemplateDataDir,
  removeDataDir,
  type ServerProcess,
  startServer,
  usesEmbeddedDatabase,
  withClient
} from "../support/Processes.ts"
import { scriptedProject } from "../support/ScriptedModel.ts"
import { Reply, type ScriptedProviderShape, startScriptedProvider } from "../support/ScriptedProvider.ts"
import { uniqueEmail } from "../support/TestApp.ts"

const TIMEOUT_MS = 240_000
const PROCESSES = 2
const AGENTS = 12
/** The process every result is posted through. */
const RESULTS = 1

describe.skipIf(usesEmbeddedDatabase)("a wait handed over across processes (Postgres only)", () => {
  const dataDirs: Array<string> = []
  let provider: ScriptedProviderShape
  let closeProvider: () => Promise<void>
  let servers: Array<ServerProcess> = []

  beforeAll(async () => {
    const template = await makeTemplateDataDir()
    dataDirs.push(template)
    const started = await startScriptedProvider()
    provider = started.provider
    closeProvider = started.close
  }, TIMEOUT_MS)

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    killLeftoverServers()
    dataDirs.forEach(removeDataDir)
    await closeProvider?.()
  })

  it("results posted through another process wake the waiting workflows at once; every turn completes once", async () => {
    const token = `waits-${randomBytes(16).toString("hex")}`
    const env = {
      AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
      AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("waits"),
      AGENT_PLATFORM_SECRET_KEY: randomBytes(32).toString("base64")
    }
    const slug = `waits-${randomBytes(4).toString("hex")}`
    // A turn's first model call asks for the tool; the one after the tool's result answers.
    await Effect.runPromise(provider.answerByDefault((body) => {
      const items: ReadonlyArray<{ type?: string }> = Array.isArray(body.input) ? body.input : []
      return items.at(-1)?.type === "function_call_output" ? Reply.text("All green.") : Reply.toolCall("lookup", { query: "status" })
    }))
    servers = await Promise.all(Array.from({ length: PROCESSES }, () => {
      const dataDir = makeDataDir(dataDirs[0])
      dataDirs.push(dataDir)
      return startServer(dataDir, env)
    }))
    const on = <A, E>(index: number, f: (client: Client) => Effect.Effect<A, E>) => withClient(servers[index].baseUrl, token, f)
    await waitForShards(process.env.DATABASE_URL!, PROCESSES)

    const setup = await on(0, (client) =>
      scriptedProject(client, { name: "Waits", label: "waits", baseUrl: provider.baseUrl("openai-responses"), slug }))
    const agentPath = (agentID: AgentId) => ({ ...setup.projectPath, agentID })
    const agentIds = await Promise.all(Array.from({ length: AGENTS }, () =>
      on(0, (client) => client.agents.create({ params: setup.projectPath, payload: { agent_config_id: setup.configId } }))
        .then((agent) => agent.id)))
    // Each turn's result posted as soon as its call is ready: the workflow has just begun to wait.
    const goneOn = await Promise.all(agentIds.map(async (agentId) => {
      await on(0, (client) => client.agents.sendInput({ params: agentPath(agentId), payload: { content_blocks: [{ type: "text", text: "check" }] } }))
      const calls = await on(RESULTS, (client) =>
        eventually(client.toolCalls.list({ params: agentPath(agentId), query: {} }), (page) => page.data[0]?.state === "ready", "the custom call"))
      const posted = Date.now()
      await on(RESULTS, (client) =>
        client.toolCalls.submitResult({
          params: { ...agentPath(agentId), toolCallID: calls.data[0].id },
          payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "green" }] }
        }))
      await on(RESULTS, (client) =>
        eventually(client.agents.get({ params: agentPath(agentId) }), (agent) => agent.status === "idle", "the turn to finish", "60 seconds"))
      return Date.now() - posted
    }))
    // A workflow not woken by the other process's append would go on only once IN_MEMORY_WAIT,
    // begun just before the result was posted, had passed.
    expect(Math.max(...goneOn)).toBeLessThan(Duration.toMillis(IN_MEMORY_WAIT) / 2)

    for (const agentId of agentIds) {
      const events = await on(0, (client) => client.agents.listEvents({ params: agentPath(agentId), query: { limit: 500 } }))
      expect(events.data.map((event) => event.event_kind)).toEqual(["agent_input", "turn", "tool_call", "tool_result", "model_output", "turn"])
      expect(events.data[5]).toMatchObject({ turn_status: "completed" })
    }
    const requests = (await Effect.runPromise(provider.requests)).filter((request) => request.body?.model === slug)
    expect(requests).toHaveLength(2 * AGENTS)
  }, TIMEOUT_MS)
})
