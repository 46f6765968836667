/**
 * Several server processes on one Postgres (docs/scale-out.md): turns per second and p50/p99
 * turn latency with 1, 2 and 3 processes, 10 and 100 agents, on a fresh database per process
 * count, the scripted provider answering at once. Agents are created round-robin over the
 * processes and each agent's event stream is read from the process it was created on; inputs
 * are spread round-robin over all processes, so most reach a process other than the one whose
 * shard runs the turn, and most streams are woken by another process's commit.
 *
 * On a machine with few cores the processes share them: the figures show what running several
 * processes costs (messages between runners, wake-ups through Postgres), not a speed-up.
 *
 * With 2 and 3 processes, a real daemon connected to the first process serves the files route:
 * the p50 of FILE_READS reads of a 1 KiB file through the daemon's process and through another
 * (the request and its result signalled between the processes).
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { waitForShards } from "../test/support/ClusterShards.ts"
import { Reply, startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import { createDatabase, type FreshDatabase, newToken, type Process, startProcess, temporaryDataDir } from "./Harness.ts"
import { connectDaemon } from "./machines.ts"
import { agentTurn, driveTurns, followTurns, percentile, request, type RuntimeRow, setUp, turnRows } from "./runtime.ts"

const PROCESS_COUNTS = [1, 2, 3] as const
const AGENTS = [10, 100] as const
/** Reads of a file on the machine through each of two processes, one after the other. */
const FILE_READS = 40

/**
 * The p50 of FILE_READS reads through the files route of a file on a daemon connected to
 * `servers[0]`, through it and through `servers[1]`.
 */
const machineRows = async (servers: ReadonlyArray<Process>, token: string, orgId: string): Promise<Array<RuntimeRow>> => {
  const work = realpathSync(mkdtempSync(join(tmpdir(), "agent-platform-bench-scale-machine-")))
  mkdirSync(join(work, "files"))
  const file = join(work, "files", "one-kib.txt")
  writeFileSync(file, "x".repeat(1023) + "\n")
  const { daemon, machine } = await connectDaemon(servers[0].baseUrl, token, orgId, work)
  try {
    const readsThrough = async (server: Process) => {
      const latencies: Array<number> = []
      for (let read = 0; read < FILE_READS; read++) {
        const sent = performance.now()
        await request("GET", `${server.baseUrl}/v1/orgs/${orgId}/machines/${machine.id}/files?path=${encodeURIComponent(file)}`, token)
        latencies.push(performance.now() - sent)
      }
      return percentile(latencies.sort((a, b) => a - b), 0.5)
    }
    const processes = `${servers.length} processes, Postgres`
    return [
      { name: `files route read p50, through the daemon's process, ${processes}`, value: await readsThrough(servers[0]), unit: "ms" },
      { name: `files route read p50, through another process, ${processes}`, value: await readsThrough(servers[1]), unit: "ms" }
    ]
  } finally {
    daemon.kill("SIGTERM")
    rmSync(work, { recursive: true, force: true })
  }
}

/** The figures with `processes` servers on the fresh database `database`. */
const measureProcesses = async (processes: number, database: FreshDatabase, providerUrl: string) => {
  const token = newToken()
  const env = {
    DATABASE_URL: database.url,
    AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
    // Every process must use the same key for secrets at rest.
    AGENT_PLATFORM_SECRET_KEY: randomBytes(32).toString("base64")
  }
  const dataDirs = Array.from({ length: processes }, () => temporaryDataDir())
  const servers: Array<Process> = []
  const rows: Array<RuntimeRow> = []
  try {
    servers.push(...await Promise.all(dataDirs.map((dataDir) => startProcess("src/main.ts", { ...env, DATA_DIR: dataDir.dir }))))
    await waitForShards(database.url, processes)
    const { configId, projectUrl } = await setUp(servers[0].baseUrl, token, providerUrl)
    const projectPath = projectUrl.slice(servers[0].baseUrl.length)
    let nextInput = 0
    for (const agents of AGENTS) {
      const abort = new AbortController()
      const launched = await Promise.all(Array.from({ length: agents }, async (_, index) => {
        const home = servers[index % processes].baseUrl
        const agent = await request("POST", `${home}${projectPath}/agents`, token, { agent_config_id: configId })
        const agentPath = `${projectPath}/agents/${agent.id}`
        return {
          inputsUrl: () => `${servers[nextInput++ % processes].baseUrl}${agentPath}/inputs`,
          turnEnded: await followTurns(`${home}${agentPath}`, token, abort.signal)
        }
      }))
      const { elapsed, latencies } = await driveTurns(launched.map((agent) => agentTurn(agent, token)))
      abort.abort()
      rows.push(...turnRows(`${agents} agents, ${processes} process${processes === 1 ? "" : "es"}, Postgres`, latencies, elapsed))
    }
    if (processes > 1) rows.push(...await machineRows(servers, token, projectPath.split("/")[3]))
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    dataDirs.forEach((dataDir) => dataDir.remove())
  }
  return rows
}

/** The figures for 1, 2 and 3 processes; none when no Postgres is reachable. */
export const scaleOut = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  const { close, provider } = await startScriptedProvider({ record: false })
  const rows: Array<RuntimeRow> = []
  try {
    await Effect.runPromise(provider.answerByDefault(Reply.text("ok")))
    for (const processes of PROCESS_COUNTS) {
      let database: FreshDatabase
      try {
        database = await createDatabase()
      } catch {
        return rows
      }
      try {
        rows.push(...await measureProcesses(processes, database, provider.baseUrl("openai-responses")))
      } finally {
        await database.drop()
      }
    }
    return rows
  } finally {
    await close()
  }
}
