/**
 * Durability (docs/runtime.md, "What happens on a crash"): the server runs as a child process
 * (`npm start` on a temporary DATA_DIR with a bootstrap token), the scripted provider in this
 * process. The server is killed with SIGKILL mid-turn (or stopped while a turn waits for a
 * tool's result), started again, and the turn finishes with
 * every event exactly once (gapless sequences, the expected kinds in order) and no completed
 * model call made again (the provider's request count).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { randomBytes } from "node:crypto"
import type { Client } from "../../src/api/Client.ts"
import type { AgentEvent } from "../../src/domain/runtime/Events.ts"
import type { ToolCallId } from "../../src/domain/shared/Ids.ts"
import { workflowShardingConfig } from "../../src/layers/WorkflowEngine.ts"
import { stepLimitError } from "../../src/services/runtime/TurnLimits.ts"
import { startServer, usesEmbeddedDatabase, withClient } from "../support/Processes.ts"
import { until } from "../support/Polling.ts"
import { scriptedProject } from "../support/ScriptedModel.ts"
import { Reply, type ScriptedReply } from "../support/ScriptedProvider.ts"
import { serverProcesses } from "../support/ServerProcesses.ts"
import { uniqueEmail } from "../support/TestApp.ts"

const describeServers = usesEmbeddedDatabase ? describe.concurrent : describe

const TIMEOUT_MS = 240_000

const servers = serverProcesses(TIMEOUT_MS)

const run = <A, E>(baseUrl: string, token: string, f: (client: Client) => Effect.Effect<A, E>) => withClient(baseUrl, token, f)


/** A project with the scripted provider's model and the runtime test config, and an agent. */
const setUp = (baseUrl: string, token: string, slug: string) =>
  run(baseUrl, token, (client) =>
    Effect.gen(function*() {
      const { configId, projectPath } = yield* scriptedProject(client, {
        name: "Crash",
        label: "crash",
        baseUrl: servers.provider.baseUrl("openai-responses"),
        slug
      })
      const agent = yield* client.agents.create({ params: projectPath, payload: { agent_config_id: configId } })
      return { projectPath, agentPath: { ...projectPath, agentID: agent.id } }
    }))

type Paths = Awaited<ReturnType<typeof setUp>>

const eventsOf = (baseUrl: string, token: string, paths: Paths) =>
  run(baseUrl, token, (client) => client.agents.listEvents({ params: paths.agentPath, query: { limit: 500 } })).then((page) => page.data)

const agentOf = (baseUrl: string, token: string, paths: Paths) => run(baseUrl, token, (client) => client.agents.get({ params: paths.agentPath }))

const requestsFor = async (slug: string) => (await Effect.runPromise(servers.provider.requests)).filter((r) => r.body?.model === slug)

const expectExactlyOnce = (events: ReadonlyArray<AgentEvent>, kinds: ReadonlyArray<string>) => {
  expect(events.map((event) => event.event_kind)).toEqual(kinds)
  expect(events.map((event) => event.sequence)).toEqual(kinds.map((_, index) => index + 1))
  expect(events.map((event) => event.turn_sequence)).toEqual(kinds.map((_, index) => index))
  expect(new Set(events.map((event) => event.id)).size).toBe(events.length)
}

/**
 * A server on a new data directory, the provider scripted with `replies` for a model of the test's
 * own, a project and an agent on it, and the agent's input `text` sent: the first server, with what
 * a restart needs (the data directory, its environment, the token) and the paths.
 */
const startTurn = async (replies: ReadonlyArray<ScriptedReply>, text: string, moreEnv: Record<string, string> = {}) => {
  const dataDir = servers.dataDir()
  const token = `crash-${randomBytes(16).toString("hex")}`
  const env = { AGENT_PLATFORM_BOOTSTRAP_TOKEN: token, AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("crash"), ...moreEnv }
  const slug = `crash-${randomBytes(4).toString("hex")}`
  await Effect.runPromise(servers.provider.script(replies, { model: slug }))
  const first = await startServer(dataDir, env)
  const paths = await setUp(first.baseUrl, token, slug)
  await run(first.baseUrl, token, (client) =>
    client.agents.sendInput({ params: paths.agentPath, payload: { content_blocks: [{ type: "text", text }] } }))
  return { dataDir, env, token, slug, first, paths }
}

/** The id of the agent's custom call, once it is `ready`. */
const readyCall = (baseUrl: string, token: string, paths: Paths) =>
  until(
    () => run(baseUrl, token, (client) => client.toolCalls.list({ params: paths.agentPath, query: {} })),
    (page) => page.data[0]?.state === "ready",
    "the custom call"
  ).then((page) => page.data[0].id)

/** The id of the agent's custom call `providerCallId`, once it is `ready`. */
const readyCallOf = (baseUrl: string, token: string, paths: Paths, providerCallId: string) =>
  until(
    () => run(baseUrl, token, (client) => client.toolCalls.list({ params: paths.agentPath, query: {} })),
    (page) => page.data.some((call) => call.provider_call_id === providerCallId && call.state === "ready"),
    `the custom call ${providerCallId}`
  ).then((page) => page.data.find((call) => call.provider_call_id === providerCallId)!.id)

const submitResult = (baseUrl: string, token: string, paths: Paths, toolCallID: ToolCallId, text: string) =>
  run(baseUrl, token, (client) =>
    client.toolCalls.submitResult({
      params: { ...paths.agentPath, toolCallID },
      payload: { outcome: "succeeded", content_blocks: [{ type: "text", text }] }
    }))

// Concurrent only on the embedded database, where each test has its own data directory: on
// Postgres the tests share the file's database, where their servers would form one cluster and run
// each other's turns (docs/scale-out.md), which the restarts here would disturb.
describeServers("crash and restart", () => {
  it("killed with a model call in flight: the call is made again after the restart, the completed one is not", async () => {
    const { dataDir, env, first, paths, slug, token } = await startTurn([
      Reply.toolCall("lookup", { query: "status" }, "call_a"),
      Reply.answer([{ type: "text", text: "never delivered" }], { delay_ms: 600_000 }),
      Reply.text("All good.")
    ], "check")
    await submitResult(first.baseUrl, token, paths, await readyCall(first.baseUrl, token, paths), "green")
    await until(() => requestsFor(slug), (requests) => requests.length === 2, "the second model call")
    await first.kill()

    const second = await startServer(dataDir, env)
    try {
      const agent = await until(() => agentOf(second.baseUrl, token, paths), (a) => a.status === "idle", "the turn to finish")
      expect(agent.current_turn_id).toBeNull()
      const events = await eventsOf(second.baseUrl, token, paths)
      expectExactlyOnce(events, ["agent_input", "turn", "tool_call", "tool_result", "model_output", "turn"])
      expect(events[5]).toMatchObject({ turn_status: "completed" })
      expect(events[4]).toMatchObject({ content_blocks: [{ type: "text", text: "All good." }] })
      const requests = await requestsFor(slug)
      expect(requests).toHaveLength(3)
      expect(requests[1].aborted).toBe(true)
      expect(JSON.stringify(requests[2].body)).toContain("green")
      const turn = await run(second.baseUrl, token, (client) =>
        client.agents.getTurn({ params: { ...paths.agentPath, turnID: events[0].turn_id! } }))
      expect(turn).toMatchObject({ status: "completed", model_calls: 2 })
    } finally {
      await second.stop()
    }
  }, TIMEOUT_MS)

  it("stopped while a turn waits for a tool's result in memory: the stop does not wait for it; after the restart the result resumes the turn", async () => {
    const { dataDir, env, first, paths, slug, token } = await startTurn(
      [Reply.toolCall("lookup", { query: "status" }, "call_c"), Reply.text("All good.")],
      "check"
    )
    const callId = await readyCall(first.baseUrl, token, paths)
    // The workflow waits for the result in memory (TurnWaits): stopping, it waits durably at
    // once, where a workflow still running would hold the stop for entityTerminationTimeout.
    const stopping = Date.now()
    await first.stop()
    expect(Date.now() - stopping).toBeLessThan(Duration.toMillis(workflowShardingConfig.entityTerminationTimeout!))

    const second = await startServer(dataDir, env)
    try {
      await submitResult(second.baseUrl, token, paths, callId, "green")
      await until(() => agentOf(second.baseUrl, token, paths), (a) => a.status === "idle", "the turn to finish")
      const events = await eventsOf(second.baseUrl, token, paths)
      expectExactlyOnce(events, ["agent_input", "turn", "tool_call", "tool_result", "model_output", "turn"])
      expect(events[5]).toMatchObject({ turn_status: "completed" })
      const requests = await requestsFor(slug)
      expect(requests).toHaveLength(2)
      expect(JSON.stringify(requests[1].body)).toContain("green")
    } finally {
      await second.stop()
    }
  }, TIMEOUT_MS)

  it("killed while waiting for an approval, and again right after approving: the turn finishes, nothing twice", async () => {
    const { dataDir, env, first, paths, slug, token } = await startTurn(
      [Reply.toolCall("deploy", { env: "prod" }, "call_b"), Reply.text("Deployed.")],
      "deploy"
    )
    await until(() => agentOf(first.baseUrl, token, paths), (a) => a.status === "waiting", "the approval")
    await first.kill()

    const second = await startServer(dataDir, env)
    const interactions = await run(second.baseUrl, token, (client) =>
      client.interactions.listForAgent({ params: paths.agentPath, query: {} }))
    expect(interactions.data).toHaveLength(1)
    await run(second.baseUrl, token, (client) =>
      client.interactions.resolve({
        params: { ...paths.projectPath, interactionID: interactions.data[0].id },
        payload: { decision: "approve" }
      }))
    await second.kill()

    const third = await startServer(dataDir, env)
    try {
      await submitResult(third.baseUrl, token, paths, await readyCall(third.baseUrl, token, paths), "v2 live")
      await until(() => agentOf(third.baseUrl, token, paths), (a) => a.status === "idle", "the turn to finish")
      const events = await eventsOf(third.baseUrl, token, paths)
      expectExactlyOnce(events, [
        "agent_input",
        "turn",
        "tool_call",
        "interaction",
        "interaction",
        "tool_result",
        "model_output",
        "turn"
      ])
      expect(events[7]).toMatchObject({ turn_status: "completed" })
      const requests = await requestsFor(slug)
      expect(requests).toHaveLength(2)
      expect(JSON.stringify(requests[1].body)).toContain("v2 live")
    } finally {
      await third.stop()
    }
  }, TIMEOUT_MS)
})

// Alone, after the others: not a fourth server beside the concurrent ones above, whose second
// test times a stop (under entityTerminationTimeout, 2 s): with four, on a loaded machine, it
// took 2.4 s once.
describe("crash and restart, the turn's model calls", () => {
  it("killed mid-turn with AGENT_PLATFORM_MAX_TURN_STEPS=3: the resumed turn counts the steps made before the crash", async () => {
    const { dataDir, env, first, paths, slug, token } = await startTurn([
      Reply.toolCall("lookup", { query: "one" }, "call_1"),
      Reply.toolCall("lookup", { query: "two" }, "call_2"),
      Reply.toolCall("lookup", { query: "three" }, "call_3"),
      Reply.text("a fourth model call")
    ], "look up three things", { AGENT_PLATFORM_MAX_TURN_STEPS: "3" })
    await submitResult(first.baseUrl, token, paths, await readyCallOf(first.baseUrl, token, paths, "call_1"), "first")
    const second = await readyCallOf(first.baseUrl, token, paths, "call_2")
    await first.kill()

    const restarted = await startServer(dataDir, env)
    try {
      await submitResult(restarted.baseUrl, token, paths, second, "second")
      await submitResult(restarted.baseUrl, token, paths, await readyCallOf(restarted.baseUrl, token, paths, "call_3"), "third")
      await until(() => agentOf(restarted.baseUrl, token, paths), (a) => a.status === "idle", "the turn to end")
      const events = await eventsOf(restarted.baseUrl, token, paths)
      const turn = await run(restarted.baseUrl, token, (client) =>
        client.agents.getTurn({ params: { ...paths.agentPath, turnID: events[0].turn_id! } }))
      expect(turn).toMatchObject({ status: "failed", error: stepLimitError(3), model_calls: 3 })
      expect(await requestsFor(slug)).toHaveLength(3)
    } finally {
      await restarted.stop()
    }
  }, TIMEOUT_MS)
})
