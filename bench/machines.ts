/**
 * Built-in tool round trips (docs/machines.md): the server as a child process, a real daemon
 * (`src/daemon/main.ts`) connected to it, the scripted provider in this process answering each
 * turn with one tool call and then a text. For `read_file` of a 1 KiB file and `run_command` of
 * `true`, with 1 agent (TURNS_ALONE turns) and 20 agents at once (TURNS_EACH turns each), after
 * WARM_UP_TURNS unmeasured turns of one agent:
 * - the tool's round trip, from the `tool_call` event to its `tool_result` event (the server's
 *   timestamps): server → daemon → server, the request stored, sent, executed, its result stored
 *   with the call's completion; p50 and p99;
 * - the whole turn (POST input to the turn's end on the agent's stream: a model call, the tool's
 *   round trip, the model call after it): turns a second, p50; the server's CPU a turn, the
 *   daemon's a call (its commands' processes included), and Postgres's a turn on Postgres.
 * On the embedded PGlite, then on a fresh Postgres database when one is reachable (DATABASE_URL's
 * server, else the local one). `machines()` returns rows `{ name, value, unit }`.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Reply, type ScriptedProviderShape, startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import {
  cpuMillisecondsOfTree,
  newToken,
  postgresCpuMilliseconds,
  ROOT,
  startProcess,
  temporaryDataDir
} from "./Harness.ts"
import { eachDatabase, followTurns, percentile, request, type RuntimeRow } from "./runtime.ts"

const TURNS_ALONE = 40
const TURNS_EACH = 10
const AGENTS = [1, 20] as const
/** Turns of one agent run, unmeasured, before the first case: the server's first turns run cold (JIT). */
const WARM_UP_TURNS = 10

const CASES = [
  { label: "read_file 1 KiB", tool: "read_file", input: { path: "one-kib.txt" } },
  { label: "run_command true", tool: "run_command", input: { command: "true" } }
] as const

export const machines = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  const { close, provider } = await startScriptedProvider({ record: false })
  try {
    return await eachDatabase((target, env) => onMachine(target, env, provider))
  } finally {
    await close()
  }
}

/** The rows of a server on the database `env` names (`target` in the rows), its daemon in a directory of its own. */
const onMachine = async (target: string, env: Record<string, string>, provider: ScriptedProviderShape) => {
  const token = newToken()
  const dataDir = temporaryDataDir()
  const work = realpathSync(mkdtempSync(join(tmpdir(), "agent-platform-bench-machine-")))
  mkdirSync(join(work, "files"))
  writeFileSync(join(work, "files", "one-kib.txt"), "x".repeat(1023) + "\n")
  const rows: Array<RuntimeRow> = []
  const server = await startProcess("src/main.ts", { DATA_DIR: dataDir.dir, AGENT_PLATFORM_BOOTSTRAP_TOKEN: token, ...env })
  let daemon: ChildProcess | undefined
  try {
    const base = server.baseUrl
    const org = await request("POST", `${base}/v1/orgs`, token, { name: "Machine bench" })
    const project = await request("POST", `${base}/v1/orgs/${org.id}/projects`, token, { name: "Bench" })
    const secret = await request("POST", `${base}/v1/orgs/${org.id}/secrets`, token, { name: "Key", value: "sk-bench" })
    const providerConfig = await request("POST", `${base}/v1/orgs/${org.id}/model-provider-configs`, token, {
      name: "Bench provider",
      api_format: "openai-responses",
      base_url: provider.baseUrl("openai-responses"),
      auth_secret_id: secret.id
    })
    const connected = await connectDaemon(base, token, org.id, work)
    daemon = connected.daemon
    const { machine } = connected
    const daemonPid = daemon.pid!
    await request("POST", `${base}/v1/orgs/${org.id}/machines/${machine.id}/grants`, token, { target_project_id: project.id })
    let modelCount = 0

    const bench: BenchProject = { base, token, orgId: org.id, projectId: project.id, providerConfigId: providerConfig.id }
    /** Runs `turns` turns of each of `agents` new agents whose turns each call `tool` once on the machine. */
    const run = async (agents: number, turns: number, tool: string, input: Record<string, unknown>) => {
      const agentUrls = await Promise.all(Array.from({ length: agents }, () =>
        toolAgent(bench, provider, `bench-machine-${modelCount++}`, [`  - machine_id: ${machine!.id}`], turns, tool, input)
      ))
      const abort = new AbortController()
      const latencies: Array<number> = []
      const started = performance.now()
      await Promise.all(agentUrls.map(async (agentUrl) => {
        const turnEnded = await followTurns(agentUrl, token, abort.signal)
        for (let turn = 0; turn < turns; turn++) {
          const sent = performance.now()
          const accepted = await request("POST", `${agentUrl}/inputs`, token, { content_blocks: [{ type: "text", text: "go" }] })
          const status = await turnEnded(accepted.event.turn_id)
          if (status !== "completed") throw new Error(`a benchmark turn ended ${status}`)
          latencies.push(performance.now() - sent)
        }
      }))
      const elapsed = (performance.now() - started) / 1000
      abort.abort()
      latencies.sort((a, b) => a - b)
      return { agentUrls, latencies, elapsed }
    }

    await run(1, WARM_UP_TURNS, CASES[0].tool, CASES[0].input)
    for (const { input, label, tool } of CASES) {
      for (const agents of AGENTS) {
        const cpuBefore = { server: server.cpuMilliseconds(), daemon: cpuMillisecondsOfTree(daemonPid), postgres: postgresCpuMilliseconds() }
        const { agentUrls, elapsed, latencies } = await run(agents, agents === 1 ? TURNS_ALONE : TURNS_EACH, tool, input)
        const turns = latencies.length
        const serverCpu = server.cpuMilliseconds() - cpuBefore.server
        const daemonCpu = cpuMillisecondsOfTree(daemonPid) - cpuBefore.daemon
        const postgresCpuAfter = env.DATABASE_URL === undefined ? undefined : postgresCpuMilliseconds()
        const roundTrips = (await Promise.all(agentUrls.map((agentUrl) => toolRoundTrips(agentUrl, token, tool)))).flat()
        roundTrips.sort((a, b) => a - b)
        const what = `${label}, ${agents} agent${agents === 1 ? "" : "s"}, ${target}`
        rows.push({ name: `tool round trip p50, ${what}`, value: percentile(roundTrips, 0.5), unit: "ms" })
        rows.push({ name: `tool round trip p99, ${what}`, value: percentile(roundTrips, 0.99), unit: "ms" })
        rows.push({ name: `turns per second, ${what}`, value: Math.round(turns / elapsed), unit: "turns/s" })
        rows.push({ name: `turn latency p50, ${what}`, value: Math.round(percentile(latencies, 0.5)), unit: "ms" })
        rows.push({ name: `server CPU per turn, ${what}`, value: serverCpu / turns, unit: "ms" })
        rows.push({ name: `daemon CPU per call, ${what}`, value: daemonCpu / turns, unit: "ms" })
        if (cpuBefore.postgres !== undefined && postgresCpuAfter !== undefined) {
          rows.push({ name: `Postgres CPU per turn, ${what}`, value: (postgresCpuAfter - cpuBefore.postgres) / turns, unit: "ms" })
        }
      }
    }
  } finally {
    daemon?.kill("SIGTERM")
    await server.stop()
    dataDir.remove()
    rmSync(work, { recursive: true, force: true })
  }
  return rows
}

/**
 * A real daemon of the organization connected to the server at `base`, serving `<work>/files`
 * (its state file in `work`), once its machine is online: the daemon's process and its machine.
 */
export const connectDaemon = async (base: string, token: string, orgId: string, work: string) => {
  const daemonToken = await request("POST", `${base}/v1/orgs/${orgId}/daemon-tokens`, token, { name: "bench" })
  const daemon = spawn(process.execPath, [
    "src/daemon/main.ts",
    "--server",
    base,
    "--name",
    "bench",
    "--dir",
    join(work, "files"),
    "--state",
    join(work, "state.json")
  ], { cwd: ROOT, env: { ...process.env, AGENT_PLATFORM_DAEMON_TOKEN: daemonToken.token }, stdio: "ignore" })
  const deadline = Date.now() + 60_000
  while (true) {
    if (Date.now() > deadline) throw new Error("the benchmark's daemon did not come online")
    const page = await request("GET", `${base}/v1/orgs/${orgId}/machines?status=online`, token)
    const machine: Record<string, any> | undefined = page.data[0]
    if (machine !== undefined) return { daemon, machine }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** Where benchmark agents are made: a project of an organization with the scripted provider's config. */
export interface BenchProject {
  readonly base: string
  readonly token: string
  readonly orgId: string
  readonly projectId: string
  readonly providerConfigId: string
}

/**
 * An agent with its own model (its own reply queue) whose built-in tools run where
 * `machineSourceLines` say, scripted to answer each of `turns` turns with one call of `tool`
 * and then a text. Answers the agent's URL.
 */
export const toolAgent = async (
  bench: BenchProject,
  provider: ScriptedProviderShape,
  slug: string,
  machineSourceLines: ReadonlyArray<string>,
  turns: number,
  tool: string,
  input: Record<string, unknown>
) => {
  const { base, orgId, projectId, token } = bench
  const projectUrl = `${base}/v1/orgs/${orgId}/projects/${projectId}`
  const model = await request("POST", `${base}/v1/orgs/${orgId}/models`, token, {
    provider_config_id: bench.providerConfigId,
    name: slug,
    provider_model_slug: slug,
    context_window_tokens: 1_000_000,
    supports_tools: true,
    supports_reasoning: false,
    input_modalities: ["text"],
    output_modalities: ["text"]
  })
  await request("POST", `${base}/v1/orgs/${orgId}/models/${model.id}/grants`, token, { target_project_id: projectId })
  const config = await request("POST", `${projectUrl}/agent-configs`, token, {
    source: [
      "instruction: Use the machine.",
      `model: { provider_config: Bench provider, name: ${slug} }`,
      "tools:",
      "  run_command: { permission: allow }",
      "machine_sources:",
      ...machineSourceLines,
      ""
    ].join("\n"),
    source_format: "yaml"
  })
  await Effect.runPromise(provider.script(
    Array.from({ length: turns }).flatMap(() => [Reply.toolCall(tool, input), Reply.text("ok")]),
    { model: slug }
  ))
  const agent = await request("POST", `${projectUrl}/agents`, token, { agent_config_id: config.id })
  return `${projectUrl}/agents/${agent.id}`
}

/** How long each built-in call of the agent took, from its `tool_call` event to its `tool_result` (failures throw). */
export const toolRoundTrips = async (agentUrl: string, token: string, tool: string) => {
  const page = await request("GET", `${agentUrl}/events?limit=500`, token)
  const calledAt = new Map<string, number>()
  const roundTrips: Array<number> = []
  for (const event of page.data) {
    if (event.event_kind === "tool_call") calledAt.set(event.tool_call_id, Date.parse(event.created_at))
    if (event.event_kind === "tool_result") {
      if (event.outcome !== "succeeded") throw new Error(`a benchmark ${tool} failed: ${JSON.stringify(event.content_blocks)}`)
      roundTrips.push(Date.parse(event.created_at) - calledAt.get(event.tool_call_id)!)
    }
  }
  return roundTrips
}
