/**
 * The agent runtime (docs/runtime.md): the server as a child process on the embedded PGlite, the
 * scripted provider in this process answering every model call at once, so the figures measure
 * the platform and not a model.
 *
 * - turns per second, p50 and p99 turn latency (from POST input to the turn's `completed` event,
 *   read from each agent's event stream) with 1, 10 and 100 agents, each sending its next input
 *   as soon as its turn completes, for BENCH_DURATION_SECONDS each (after WARM_UP_SECONDS of
 *   unmeasured turns before the first, so that the server's JIT is warm), and the server process's CPU
 *   time per turn (on PGlite it includes the embedded database, which runs in that process; on a
 *   Postgres server on this machine, the CPU its processes used per turn too), and this process's
 *   (the clients and the scripted provider, on the same cores);
 * - events per second appended (every event the turns wrote, over the time they ran) and read
 *   back through GET /events in pages of 500 (READERS agents at a time); one page of 500 read
 *   again and again by one reader: its p50 latency and the server's CPU per page.
 *
 * Run on the embedded PGlite, then on a fresh Postgres database when one is reachable
 * (DATABASE_URL's server, else the local one). `runtime()` returns rows `{ name, value, unit }`.
 */
import { Effect } from "effect"
import { Reply, type ScriptedReply, startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import {
  createDatabase,
  DURATION_SECONDS,
  type FreshDatabase,
  newToken,
  ownCpuMilliseconds,
  postgresCpuMilliseconds,
  type Process,
  ROOT,
  startProcess,
  temporaryDataDir
} from "./Harness.ts"

export interface RuntimeRow {
  readonly name: string
  readonly value: number
  readonly unit: string
}

const CONCURRENCY = [1, 10, 100] as const
const PAGE = 500
/** Agents whose events are read back at the same time. */
const READERS = 10
/** Turns run, unmeasured, before a server's first measured case: its first turns run cold (JIT). */
const WARM_UP_SECONDS = 3
/** Reads of one page, one after the other, for its latency. */
const PAGE_READS = 100

export const request = async (method: string, url: string, token: string, body?: unknown) => {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${url} answered ${response.status}: ${text}`)
  // 204 (a delete) has no body.
  return (text === "" ? {} : JSON.parse(text)) as Record<string, any>
}

/** Each project skill of a bench config (BenchConfig.skills) has a file this long beside its SKILL.md. */
const SKILL_FILE_BYTES = 16 * 1024

/** The custom tool a bench config lists when BenchConfig.customTool is set. */
export const BENCH_TOOL = "lookup"

/** What the agent config of `setUp` lists besides its model: project skills, and a custom tool. */
export interface BenchConfig {
  readonly skills?: number
  readonly customTool?: boolean
}

/** An organization and a project with a model granted, and an agent config on it (`config`). */
export const setUp = async (baseUrl: string, token: string, providerUrl: string, config: BenchConfig = {}) => {
  const org = await request("POST", `${baseUrl}/v1/orgs`, token, { name: "Runtime bench" })
  const project = await request("POST", `${baseUrl}/v1/orgs/${org.id}/projects`, token, { name: "Bench" })
  const secret = await request("POST", `${baseUrl}/v1/orgs/${org.id}/secrets`, token, { name: "Key", value: "sk-bench" })
  const provider = await request("POST", `${baseUrl}/v1/orgs/${org.id}/model-provider-configs`, token, {
    name: "Bench provider",
    api_format: "openai-responses",
    base_url: providerUrl,
    auth_secret_id: secret.id
  })
  const model = await request("POST", `${baseUrl}/v1/orgs/${org.id}/models`, token, {
    provider_config_id: provider.id,
    name: "Bench model",
    provider_model_slug: "bench-1",
    context_window_tokens: 1_000_000,
    supports_tools: true,
    supports_reasoning: false,
    input_modalities: ["text"],
    output_modalities: ["text"]
  })
  await request("POST", `${baseUrl}/v1/orgs/${org.id}/models/${model.id}/grants`, token, { target_project_id: project.id })
  const projectUrl = `${baseUrl}/v1/orgs/${org.id}/projects/${project.id}`
  const skillNames = Array.from({ length: config.skills ?? 0 }, (_, index) => `bench-skill-${index + 1}`)
  for (const name of skillNames) {
    await request("POST", `${baseUrl}/v1/orgs/${org.id}/skills`, token, {
      name,
      description: "A benchmark skill",
      owner_project_id: project.id,
      content: { "SKILL.md": `# ${name}\nAnswer briefly.`, files: { "reference.md": "x".repeat(SKILL_FILE_BYTES) } }
    })
  }
  const created = await request("POST", `${projectUrl}/agent-configs`, token, {
    source: "instruction: Answer briefly.\nmodel:\n  provider_config: Bench provider\n  name: Bench model\n" +
      (skillNames.length === 0 ? "" : `skills:\n${skillNames.map((name) => `  - name: ${name}\n`).join("")}`) +
      (config.customTool === true
        ? `tools:\n  ${BENCH_TOOL}:\n    type: custom\n    description: Looks a thing up\n    input_schema: { type: object }\n`
        : ""),
    source_format: "yaml"
  })
  return { projectUrl, configId: created.id as string }
}

/** A server under benchmark, started with a project ready to run agents in (`setUp`). */
export interface ProjectServer {
  readonly server: Process
  readonly token: string
  readonly projectUrl: string
  readonly configId: string
}

/**
 * Runs `use` against this server (or the one of the checkout at `root`), started on a temporary
 * DATA_DIR with `env` (which names its database) and set up by `setUp` (with `config`), then stops
 * it and removes the directory.
 */
export const withProjectServer = async <A>(
  env: Record<string, string>,
  providerUrl: string,
  use: (started: ProjectServer) => Promise<A>,
  root = ROOT,
  config: BenchConfig = {}
): Promise<A> => {
  const token = newToken()
  const dataDir = temporaryDataDir()
  try {
    const server = await startProcess("src/main.ts", { DATA_DIR: dataDir.dir, AGENT_PLATFORM_BOOTSTRAP_TOKEN: token, ...env }, [], root)
    try {
      return await use({ server, token, ...await setUp(server.baseUrl, token, providerUrl, config) })
    } finally {
      await server.stop()
    }
  } finally {
    dataDir.remove()
  }
}

/**
 * An agent's event stream: resolves the waiter of a turn when its `completed` (or `failed`) event
 * arrives; `onToolCall`, when given, is told the id of each tool call as its event arrives.
 */
export const followTurns = async (agentUrl: string, token: string, abort: AbortSignal, onToolCall?: (toolCallId: string) => void) => {
  const waiters = new Map<string, (status: string) => void>()
  const ended = new Map<string, string>()
  const response = await fetch(`${agentUrl}/events/stream`, { headers: { authorization: `Bearer ${token}` }, signal: abort })
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  void (async () => {
    let buffer = ""
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        buffer += value
        let end: number
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const message = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = message.split("\n").find((line) => line.startsWith("data: "))
          if (data === undefined) continue
          const event = JSON.parse(data.slice(6)) as { event_kind: string; turn_id: string; turn_status?: string; tool_call_id?: string }
          if (event.event_kind === "tool_call") onToolCall?.(event.tool_call_id!)
          if (event.event_kind !== "turn" || event.turn_status === "started") continue
          const waiter = waiters.get(event.turn_id)
          if (waiter === undefined) ended.set(event.turn_id, event.turn_status!)
          else waiter(event.turn_status!)
        }
      }
    } catch {
      // Aborted at the end of the benchmark.
    }
  })()
  return (turnId: string) =>
    new Promise<string>((resolve) => {
      const status = ended.get(turnId)
      if (status !== undefined) return resolve(status)
      waiters.set(turnId, resolve)
    })
}

/** Answers a call of the agent's custom tool (BENCH_TOOL) at once, as a client would: for `followTurns`. */
export const answerToolCall = (agentUrl: string, token: string) => (toolCallId: string) =>
  void request("POST", `${agentUrl}/tool-calls/${toolCallId}/result`, token, {
    outcome: "succeeded",
    content_blocks: [{ type: "text", text: "found" }]
  })

/**
 * A model call of a turn that calls the custom tool once (openai-responses): the tool's call,
 * then, once the call's result is the last item of the conversation, the answer.
 */
export const toolCallThenAnswer = (body: Record<string, any>): ScriptedReply => {
  const items: ReadonlyArray<{ type?: string }> = Array.isArray(body.input) ? body.input : []
  return items.at(-1)?.type === "function_call_output" ? Reply.text("ok") : Reply.toolCall(BENCH_TOOL, {})
}

/**
 * One agent of a new project whose turns are run one after the other: `turn(text)` sends an input
 * and resolves once its turn completed; `stop()` closes the agent's event stream.
 */
export const singleAgent = async (baseUrl: string, token: string, providerUrl: string, config: BenchConfig = {}) => {
  const { configId, projectUrl } = await setUp(baseUrl, token, providerUrl, config)
  const agent = await request("POST", `${projectUrl}/agents`, token, { agent_config_id: configId })
  const agentUrl = `${projectUrl}/agents/${agent.id}`
  const abort = new AbortController()
  const onToolCall = config.customTool === true ? answerToolCall(agentUrl, token) : undefined
  const turnEnded = await followTurns(agentUrl, token, abort.signal, onToolCall)
  const turn = (text: string) => agentTurn({ inputsUrl: () => `${agentUrl}/inputs`, turnEnded }, token, text)()
  return { turn, stop: () => abort.abort() }
}

export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]

export const median = (values: ReadonlyArray<number>) => percentile([...values].sort((a, b) => a - b), 0.5)

export interface DrivenAgent {
  /** Where its next input goes (benchmarks over several processes spread them). */
  readonly inputsUrl: () => string
  readonly turnEnded: (turnId: string) => Promise<string>
}

/** One turn of `agent`: sends an input (`text`) and resolves once its turn completed. */
export const agentTurn = ({ inputsUrl, turnEnded }: DrivenAgent, token: string, text = "hi") => async () => {
  const accepted = await request("POST", inputsUrl(), token, { content_blocks: [{ type: "text", text }] })
  const status = await turnEnded(accepted.event.turn_id)
  if (status !== "completed") throw new Error(`a benchmark turn ended ${status}`)
}

/**
 * Each conversation runs a turn and, as soon as it has ended, the next, for `seconds`
 * (BENCH_DURATION_SECONDS unless given): the turn latencies (sorted) and the seconds it ran.
 */
export const driveTurns = async (conversations: ReadonlyArray<() => Promise<void>>, seconds = DURATION_SECONDS) => {
  const latencies: Array<number> = []
  const runStart = performance.now()
  const deadline = runStart + seconds * 1000
  await Promise.all(conversations.map(async (turn) => {
    while (performance.now() < deadline) {
      const sent = performance.now()
      await turn()
      latencies.push(performance.now() - sent)
    }
  }))
  latencies.sort((a, b) => a - b)
  return { latencies, elapsed: (performance.now() - runStart) / 1000 }
}

/** turns/s, p50 and p99 of a run. */
export const turnRows = (label: string, latencies: ReadonlyArray<number>, elapsed: number): Array<RuntimeRow> => [
  { name: `turns per second, ${label}`, value: Math.round(latencies.length / elapsed), unit: "turns/s" },
  { name: `turn latency p50, ${label}`, value: Math.round(percentile(latencies, 0.5)), unit: "ms" },
  { name: `turn latency p99, ${label}`, value: Math.round(percentile(latencies, 0.99)), unit: "ms" }
]

/**
 * One reader reading the same page (the first agent's first PAGE events, or all it has) PAGE_READS
 * times in a row, after a few reads to warm up: the latency's p50 and the server's CPU per page.
 */
const pageReads = async (server: Process, pageUrl: string, token: string, target: string): Promise<Array<RuntimeRow>> => {
  let size = 0
  for (let read = 0; read < 10; read++) size = (await request("GET", pageUrl, token)).data.length
  const latencies: Array<number> = []
  const cpuBefore = server.cpuMilliseconds()
  for (let read = 0; read < PAGE_READS; read++) {
    const sent = performance.now()
    await request("GET", pageUrl, token)
    latencies.push(performance.now() - sent)
  }
  latencies.sort((a, b) => a - b)
  return [
    { name: `page of ${size} events p50 (one reader), ${target}`, value: percentile(latencies, 0.5), unit: "ms" },
    { name: `server CPU per page of ${size} events, ${target}`, value: (server.cpuMilliseconds() - cpuBefore) / PAGE_READS, unit: "ms" }
  ]
}

/** The figures on one server; `target` names its database in the rows. */
const measureTarget: MeasureTarget = (target, env, providerUrl) => {
  // A Postgres server's CPU, when it runs on this machine: the turns' statements cost it too.
  const onPostgres = env.DATABASE_URL !== undefined
  return withProjectServer(env, providerUrl, async ({ configId, projectUrl, server, token }) => {
    const rows: Array<RuntimeRow> = []
    const agentUrls: Array<string> = []
    let eventsWritten = 0
    /** Events the warm-up's turns wrote: read back with the rest, not counted in the append rate. */
    let warmUpEvents = 0
    let writingMs = 0
    for (const agents of CONCURRENCY) {
      const label = `${agents} agent${agents === 1 ? "" : "s"}, ${target}`
      const abort = new AbortController()
      const launched = await Promise.all(Array.from({ length: agents }, async () => {
        const agent = await request("POST", `${projectUrl}/agents`, token, { agent_config_id: configId })
        const agentUrl = `${projectUrl}/agents/${agent.id}`
        agentUrls.push(agentUrl)
        return { agentUrl, turnEnded: await followTurns(agentUrl, token, abort.signal) }
      }))
      const driven = launched.map(({ agentUrl, turnEnded }) => agentTurn({ inputsUrl: () => `${agentUrl}/inputs`, turnEnded }, token))
      // Each turn writes its input, started, model_output and completed events.
      if (agents === CONCURRENCY[0]) warmUpEvents += (await driveTurns(driven, WARM_UP_SECONDS)).latencies.length * 4
      const cpuBefore = server.cpuMilliseconds()
      const ownCpuBefore = ownCpuMilliseconds()
      const postgresCpuBefore = onPostgres ? postgresCpuMilliseconds() : undefined
      const { elapsed, latencies } = await driveTurns(driven)
      const postgresCpuAfter = postgresCpuBefore === undefined ? undefined : postgresCpuMilliseconds()
      const ownCpu = ownCpuMilliseconds() - ownCpuBefore
      abort.abort()
      writingMs += elapsed * 1000
      eventsWritten += latencies.length * 4
      rows.push(...turnRows(label, latencies, elapsed))
      rows.push({
        name: `server CPU per turn, ${label}`,
        value: (server.cpuMilliseconds() - cpuBefore) / Math.max(latencies.length, 1),
        unit: "ms"
      })
      if (postgresCpuBefore !== undefined && postgresCpuAfter !== undefined) {
        rows.push({
          name: `Postgres CPU per turn, ${label}`,
          value: (postgresCpuAfter - postgresCpuBefore) / Math.max(latencies.length, 1),
          unit: "ms"
        })
      }
      rows.push({
        name: `client and model server CPU per turn, ${label}`,
        value: ownCpu / Math.max(latencies.length, 1),
        unit: "ms"
      })
    }
    rows.push({ name: `events appended per second (by turns), ${target}`, value: Math.round(eventsWritten / (writingMs / 1000)), unit: "events/s" })

    const readStart = performance.now()
    let eventsRead = 0
    const unread = [...agentUrls]
    await Promise.all(Array.from({ length: READERS }, async () => {
      for (let agentUrl = unread.pop(); agentUrl !== undefined; agentUrl = unread.pop()) {
        let after = 0
        for (;;) {
          const page = await request("GET", `${agentUrl}/events?after_sequence=${after}&limit=${PAGE}`, token)
          eventsRead += page.data.length
          after = page.next_after_sequence
          if (!page.has_more) break
        }
      }
    }))
    if (eventsRead !== eventsWritten + warmUpEvents) {
      throw new Error(`read back ${eventsRead} events, the turns wrote ${eventsWritten + warmUpEvents}`)
    }
    rows.push({
      name: `events read per second (pages of ${PAGE}), ${target}`,
      value: Math.round(eventsRead / ((performance.now() - readStart) / 1000)),
      unit: "events/s"
    })
    rows.push(...await pageReads(server, `${agentUrls[0]}/events?after_sequence=0&limit=${PAGE}`, token, target))
    return rows
  })
}

/** The rows of one server, `target` naming its database; `env` tells it which. */
export type MeasureTarget = (target: string, env: Record<string, string>, providerUrl: string) => Promise<Array<RuntimeRow>>

/**
 * The rows of `measure` on the embedded PGlite, then on a fresh Postgres database when one is
 * reachable; `env` names the database of each (`target` in the rows).
 */
export const eachDatabase = async (
  measure: (target: string, env: Record<string, string>) => Promise<Array<RuntimeRow>>
): Promise<Array<RuntimeRow>> => {
  const rows = await measure("PGlite", {})
  let database: FreshDatabase
  try {
    database = await createDatabase()
  } catch {
    return rows
  }
  try {
    rows.push(...await measure("Postgres", { DATABASE_URL: database.url }))
  } finally {
    await database.drop()
  }
  return rows
}

/** `eachDatabase`, the scripted provider answering every model call with `reply`. */
export const onEachDatabase = async (reply: ScriptedReply, measure: MeasureTarget): Promise<ReadonlyArray<RuntimeRow>> => {
  const { close, provider } = await startScriptedProvider({ record: false })
  try {
    await Effect.runPromise(provider.answerByDefault(reply))
    const providerUrl = provider.baseUrl("openai-responses")
    return await eachDatabase((target, env) => measure(target, env, providerUrl))
  } finally {
    await close()
  }
}

/** The figures on the embedded PGlite, then on a fresh Postgres database when one is reachable. */
export const runtime = (): Promise<ReadonlyArray<RuntimeRow>> => onEachDatabase(Reply.text("ok"), measureTarget)
