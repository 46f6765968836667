/**
 * Events appended across agents (docs/performance.md): how many events a second the timeline
 * takes when clients append as fast as the server answers. Each of AGENTS agents runs a turn
 * whose model call the scripted provider holds (it never answers), and a client of its own sends
 * it inputs back to back: each input joins the agent's backlog, one `agent_input` event appended
 * by a statement of its own. The run ends early when an agent's backlog is full (MAX_BACKLOG
 * queued inputs).
 *
 * Rows, on the embedded PGlite, then on a fresh Postgres database when one is reachable: events
 * appended a second, the p50 and p99 of an input's request, and the CPU per event of the server,
 * of this process's clients (which share the machine's cores with it), and of Postgres. On
 * Postgres, the same for the plain node:http + pg baseline (bench/baselineServer.ts) doing the
 * same work in two statements for the same clients, to AGENTS agents of its own made the same
 * way: what the machine allows an append that is one request, whatever the server.
 */
import { MAX_BACKLOG } from "../src/services/runtime/AgentInputs.ts"
import { Reply } from "../test/support/ScriptedProvider.ts"
import { DURATION_SECONDS, ownCpuMilliseconds, postgresCpuMilliseconds, type Process, startProcess } from "./Harness.ts"
import { type MeasureTarget, onEachDatabase, percentile, request, type RuntimeRow, withProjectServer } from "./runtime.ts"

/** Agents appending at once (their backlogs hold AGENTS × MAX_BACKLOG inputs in all, past which `agent_backlog_full`). */
export const AGENTS = 200
/** Inputs sent, unmeasured, before the measured run (the server's JIT, the pools). */
const WARM_UP_INPUTS = 5

interface AppendingAgent {
  readonly inputsUrl: string
  /** Inputs queued so far. */
  queued: number
}

/** AGENTS agents of the project, each in a turn whose model call is held: their inputs' paths. */
export const busyAgentPaths = (projectUrl: string, configId: string, token: string) =>
  Promise.all(Array.from({ length: AGENTS }, async () => {
    const agent = await request("POST", `${projectUrl}/agents`, token, { agent_config_id: configId })
    const inputsUrl = `${projectUrl}/agents/${agent.id}/inputs`
    // Its turn: the model call it makes is held until the server stops.
    const first = await request("POST", inputsUrl, token, { content_blocks: [{ type: "text", text: "wait" }] })
    if (first.disposition !== "started") throw new Error(`a benchmark agent's first input was ${first.disposition}`)
    return new URL(inputsUrl).pathname
  }))

/** Sends `agent` one input, which must queue: the request's latency. */
const queueOne = async (agent: AppendingAgent, token: string) => {
  const sent = performance.now()
  const accepted = await request("POST", agent.inputsUrl, token, { content_blocks: [{ type: "text", text: "later" }] })
  if (accepted.disposition !== "queued") throw new Error(`a benchmark input was ${accepted.disposition}, not queued`)
  agent.queued++
  return performance.now() - sent
}

/** Each client sends its agent `count` inputs, back to back (unmeasured). */
const warmUp = (agents: ReadonlyArray<AppendingAgent>, token: string, count: number) =>
  Promise.all(agents.map(async (agent) => {
    for (let sent = 0; sent < count; sent++) await queueOne(agent, token)
  }))

/**
 * Each client sends its agent inputs back to back until `deadline`, or until one agent's backlog
 * is full, so that every client is at work throughout what is measured: the requests'
 * latencies, sorted.
 */
const appendUntil = async (agents: ReadonlyArray<AppendingAgent>, token: string, deadline: number) => {
  const latencies: Array<number> = []
  let oneFull = false
  await Promise.all(agents.map(async (agent) => {
    while (performance.now() < deadline && !oneFull) {
      if (agent.queued === MAX_BACKLOG) oneFull = true
      else latencies.push(await queueOne(agent, token))
    }
  }))
  return latencies.sort((a, b) => a - b)
}

/** What a measured run of appends gave: events a second, an input's latency, and the CPU an event. */
export interface AppendFigures {
  readonly eventsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly serverCpuMs: number
  readonly clientsCpuMs: number
  /** Undefined on the embedded database. */
  readonly postgresCpuMs: number | undefined
}

/** Inputs sent to `server` at these paths, a client a path, warmed up, then measured. */
const measureAppends = async (server: Process, paths: ReadonlyArray<string>, token: string, onPostgres: boolean): Promise<AppendFigures> => {
  const agents = paths.map((path): AppendingAgent => ({ inputsUrl: `${server.baseUrl}${path}`, queued: 0 }))
  await warmUp(agents, token, WARM_UP_INPUTS)
  const cpuBefore = server.cpuMilliseconds()
  const clientsCpuBefore = ownCpuMilliseconds()
  const postgresCpuBefore = onPostgres ? postgresCpuMilliseconds() : undefined
  const start = performance.now()
  const latencies = await appendUntil(agents, token, start + DURATION_SECONDS * 1000)
  const elapsed = (performance.now() - start) / 1000
  const cpu = server.cpuMilliseconds() - cpuBefore
  const clientsCpu = ownCpuMilliseconds() - clientsCpuBefore
  const postgresCpuAfter = postgresCpuBefore === undefined ? undefined : postgresCpuMilliseconds()
  const events = Math.max(latencies.length, 1)
  return {
    eventsPerSecond: latencies.length / elapsed,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    serverCpuMs: cpu / events,
    clientsCpuMs: clientsCpu / events,
    postgresCpuMs: postgresCpuBefore === undefined || postgresCpuAfter === undefined ? undefined : (postgresCpuAfter - postgresCpuBefore) / events
  }
}

/**
 * A run of appends to `server`, whose project `projectUrl` has the agent config `configId` (its
 * model held by the provider: `Reply.hang()`), on AGENTS agents of its own (`npm run bench -- ab`).
 */
export const appendRound = async (server: Process, projectUrl: string, configId: string, token: string, onPostgres: boolean) =>
  measureAppends(server, await busyAgentPaths(projectUrl, configId, token), token, onPostgres)

/** A run's figures as rows, labelled `label`. */
const appendRows = (figures: AppendFigures, label: string): Array<RuntimeRow> => [
  { name: `events appended per second (queued inputs), ${label}`, value: Math.round(figures.eventsPerSecond), unit: "events/s" },
  { name: `input request p50, ${label}`, value: figures.p50Ms, unit: "ms" },
  { name: `input request p99, ${label}`, value: figures.p99Ms, unit: "ms" },
  { name: `server CPU per appended event, ${label}`, value: figures.serverCpuMs, unit: "ms" },
  { name: `clients' CPU per appended event, ${label}`, value: figures.clientsCpuMs, unit: "ms" },
  ...(figures.postgresCpuMs === undefined
    ? []
    : [{ name: `Postgres CPU per appended event, ${label}`, value: figures.postgresCpuMs, unit: "ms" }])
]

const measureTarget: MeasureTarget = (target, env, providerUrl) =>
  withProjectServer(env, providerUrl, async ({ configId, projectUrl, server, token }) => {
    const onPostgres = env.DATABASE_URL !== undefined
    const label = `${AGENTS} agents, ${target}`
    const rows = appendRows(await appendRound(server, projectUrl, configId, token, onPostgres), label)
    if (!onPostgres) return rows
    // The baseline's agents, made by the server as its own were; the server idles meanwhile.
    const baselinePaths = await busyAgentPaths(projectUrl, configId, token)
    const baseline = await startProcess("bench/baselineServer.ts", { DATABASE_URL: env.DATABASE_URL })
    try {
      rows.push(...appendRows(await measureAppends(baseline, baselinePaths, token, true), `${label}, baseline node:http + pg`))
    } finally {
      await baseline.stop()
    }
    return rows
  })

/** The figures on the embedded PGlite, then on a fresh Postgres database when one is reachable. */
export const appends = (): Promise<ReadonlyArray<RuntimeRow>> => onEachDatabase(Reply.hang(), measureTarget)
