/**
 * A wait handed over in memory across processes (docs/runtime.md, "A wait handed over in memory"):
 * two server processes on one Postgres, and agents whose turns each call the custom tool.
 *
 * - Twelve agents: each result is posted through the second process as soon as its call is ready,
 *   while the turn's workflow waits in memory on whichever process holds its shard (about half of
 *   them on the first). A result committed by the other process wakes the waiting workflow through
 *   the agent's event notification, so every turn goes on at once, none after waiting out
 *   IN_MEMORY_WAIT for its durable signal.
 * - Twenty agents, every call ready, and the second process killed with SIGKILL: the turns whose
 *   workflows waited in memory there (about half) have none running anywhere until the survivor
 *   takes the dead process's shards. Half the results are posted through the survivor before that,
 *   half after; every turn is resumed and completes.
 *
 * Every turn completes with its events once and two model calls, none made again.
 *
 * Postgres only: the embedded database is one process.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { randomBytes } from "node:crypto"
import type { Client } from "../../src/api/Client.ts"
import type { AgentId, ToolCallId } from "../../src/domain/shared/Ids.ts"
import { IN_MEMORY_WAIT } from "../../src/services/runtime/TurnWaits.ts"
import { turnShardHolders, waitForShards, waitForShardsHeldBy } from "../support/ClusterShards.ts"
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
/** The process the results are posted through; the other one is killed by the last test. */
const RESULTS = 1
const SURVIVOR = 0
const VICTIM = 1

describe.skipIf(usesEmbeddedDatabase)("a wait handed over across processes (Postgres only)", () => {
  const dataDirs: Array<string> = []
  let provider: ScriptedProviderShape
  let closeProvider: () => Promise<void>
  let servers: Array<ServerProcess> = []
  let token: string
  let slug: string
  let project: Effect.Success<ReturnType<typeof scriptedProject>>

  const on = <A, E>(index: number, f: (client: Client) => Effect.Effect<A, E>) => withClient(servers[index].baseUrl, token, f)
  const agentPath = (agentID: AgentId) => ({ ...project.projectPath, agentID })

  /** `count` new agents, each sent an input through the first process: the agents and their turns. */
  const startTurns = (count: number) =>
    Promise.all(Array.from({ length: count }, async () => {
      const agent = await on(0, (client) =>
        client.agents.create({ params: project.projectPath, payload: { agent_config_id: project.configId } }))
      const accepted = await on(0, (client) =>
        client.agents.sendInput({ params: agentPath(agent.id), payload: { content_blocks: [{ type: "text", text: "check" }] } }))
      return { agentId: agent.id, turnId: accepted.event.turn_id! }
    }))

  /** The agent's custom call, once it is ready (its step recorded, the workflow waiting for its result). */
  const readyCall = (index: number, agentId: AgentId) =>
    on(index, (client) =>
      eventually(client.toolCalls.list({ params: agentPath(agentId), query: {} }), (page) => page.data[0]?.state === "ready", "the custom call"))
      .then((page) => page.data[0].id)

  const submitResult = (index: number, agentId: AgentId, toolCallID: ToolCallId) =>
    on(index, (client) =>
      client.toolCalls.submitResult({
        params: { ...agentPath(agentId), toolCallID },
        payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "green" }] }
      }))

  const idle = (index: number, agentId: AgentId) =>
    on(index, (client) =>
      eventually(client.agents.get({ params: agentPath(agentId) }), (agent) => agent.status === "idle", "the turn to finish", "60 seconds"))

  /** Every turn's events once, in order, and the provider's completed calls for them: two a turn, none cut off. */
  const expectCompletedOnce = async (index: number, agentIds: ReadonlyArray<AgentId>, callsBefore: number) => {
    for (const agentId of agentIds) {
      const events = await on(index, (client) => client.agents.listEvents({ params: agentPath(agentId), query: { limit: 500 } }))
      expect(events.data.map((event) => event.event_kind)).toEqual(["agent_input", "turn", "tool_call", "tool_result", "model_output", "turn"])
      expect(events.data.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6])
      expect(events.data[5]).toMatchObject({ turn_status: "completed" })
    }
    const requests = (await Effect.runPromise(provider.requests)).filter((request) => request.body?.model === slug).slice(callsBefore)
    expect(requests.filter((request) => request.aborted)).toHaveLength(0)
    expect(requests).toHaveLength(2 * agentIds.length)
  }

  const modelCalls = async () => (await Effect.runPromise(provider.requests)).filter((request) => request.body?.model === slug).length

  beforeAll(async () => {
    const template = await makeTemplateDataDir()
    dataDirs.push(template)
    const started = await startScriptedProvider()
    provider = started.provider
    closeProvider = started.close
    // A turn's first model call asks for the tool; the one after the tool's result answers.
    await Effect.runPromise(provider.answerByDefault((body) => {
      const items: ReadonlyArray<{ type?: string }> = Array.isArray(body.input) ? body.input : []
      return items.at(-1)?.type === "function_call_output" ? Reply.text("All green.") : Reply.toolCall("lookup", { query: "status" })
    }))
    token = `waits-${randomBytes(16).toString("hex")}`
    const env = {
      AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
      AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("waits"),
      AGENT_PLATFORM_SECRET_KEY: randomBytes(32).toString("base64")
    }
    slug = `waits-${randomBytes(4).toString("hex")}`
    servers = await Promise.all(Array.from({ length: PROCESSES }, () => {
      const dataDir = makeDataDir(template)
      dataDirs.push(dataDir)
      return startServer(dataDir, env)
    }))
    await waitForShards(process.env.DATABASE_URL!, PROCESSES)
    project = await on(0, (client) =>
      scriptedProject(client, { name: "Waits", label: "waits", baseUrl: provider.baseUrl("openai-responses"), slug }))
  }, TIMEOUT_MS)

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    killLeftoverServers()
    dataDirs.forEach(removeDataDir)
    await closeProvider?.()
  })

  it("results posted through another process wake the waiting workflows at once; every turn completes once", async () => {
    const callsBefore = await modelCalls()
    // One turn at a time, its result posted as soon as its call is ready: the workflow has just begun to wait.
    const agentIds: Array<AgentId> = []
    const goneOn: Array<number> = []
    for (let index = 0; index < 12; index++) {
      const [{ agentId }] = await startTurns(1)
      agentIds.push(agentId)
      const callId = await readyCall(RESULTS, agentId)
      const posted = Date.now()
      await submitResult(RESULTS, agentId, callId)
      await idle(RESULTS, agentId)
      goneOn.push(Date.now() - posted)
    }
    // A workflow not woken by the other process's append would go on only once IN_MEMORY_WAIT,
    // begun just before the result was posted, had passed.
    expect(Math.max(...goneOn)).toBeLessThan(Duration.toMillis(IN_MEMORY_WAIT) / 2)
    await expectCompletedOnce(0, agentIds, callsBefore)
  }, TIMEOUT_MS)

  // Kills a process: the file's last test.
  it("a process killed while turns wait in memory: the survivor resumes them, and each result completes its turn once", async () => {
    const callsBefore = await modelCalls()
    const turns = await startTurns(20)
    const agentIds = turns.map((turn) => turn.agentId)
    const turnIds = turns.map((turn) => turn.turnId)
    const callIds = await Promise.all(agentIds.map((agentId) => readyCall(SURVIVOR, agentId)))
    // Every workflow now waits for its result in memory, on the process holding its shard.
    const holdersBefore = await turnShardHolders(process.env.DATABASE_URL!, turnIds)
    await servers[VICTIM].kill()
    // Half the results at once, while the victim's shards are being taken over, half once the
    // survivor holds every shard (its workflows resumed from their journals by then).
    const half = agentIds.length / 2
    await Promise.all(agentIds.slice(0, half).map((agentId, index) => submitResult(SURVIVOR, agentId, callIds[index])))
    await waitForShardsHeldBy(process.env.DATABASE_URL!, 1)
    await Promise.all(agentIds.slice(half).map((agentId, index) => submitResult(SURVIVOR, agentId, callIds[half + index])))
    // The turns that waited on the victim: those whose shard changed hands (twenty turns all on
    // the survivor would be a one-in-a-million draw).
    const holdersAfter = await turnShardHolders(process.env.DATABASE_URL!, turnIds)
    const moved = turnIds.filter((turnId) => holdersBefore.get(turnId) !== holdersAfter.get(turnId))
    expect([holdersBefore.size, holdersAfter.size]).toEqual([turnIds.length, turnIds.length])
    expect(moved.length).toBeGreaterThan(0)
    await Promise.all(agentIds.map((agentId) => idle(SURVIVOR, agentId)))
    await expectCompletedOnce(SURVIVOR, agentIds, callsBefore)
  }, TIMEOUT_MS)
})
