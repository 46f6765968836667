/**
 * Event stream fan-out: one agent's turns, one after the other, each watched by WATCHERS more
 * streams that read every event (a dashboard open on many screens): turns a second and the
 * server's CPU per turn with 0, 100 and 1,000 watchers, on the embedded database and on Postgres.
 * What a watcher costs the server for each event it is sent (docs/performance.md, "Event streams").
 * The watchers run in this process: its CPU per turn is printed too, as it shares the machine.
 */
import { Reply } from "../test/support/ScriptedProvider.ts"
import { ownCpuMilliseconds } from "./Harness.ts"
import { agentTurn, driveTurns, followTurns, onEachDatabase, request, type RuntimeRow, turnRows, withProjectServer } from "./runtime.ts"

const WATCHERS = [0, 100, 1000] as const
const WARM_UP_SECONDS = 3

/** A stream of the agent whose client reads every event and drops it, until `abort`. */
const watch = async (agentUrl: string, token: string, abort: AbortSignal) => {
  const response = await fetch(`${agentUrl}/events/stream`, { headers: { authorization: `Bearer ${token}` }, signal: abort })
  if (response.status !== 200) throw new Error(`a watcher's stream answered ${response.status}`)
  const reader = response.body!.getReader()
  void (async () => {
    try {
      while (!(await reader.read()).done) {
        // Read and dropped: the server's cost is what is measured.
      }
    } catch {
      // Aborted at the end of the run.
    }
  })()
}

export const streamFanout = (): Promise<ReadonlyArray<RuntimeRow>> =>
  onEachDatabase(Reply.text("ok"), (target, env, providerUrl) =>
    withProjectServer(env, providerUrl, async ({ configId, projectUrl, server, token }) => {
      const rows: Array<RuntimeRow> = []
      for (const watchers of WATCHERS) {
        const label = `${watchers} watchers, ${target}`
        const abort = new AbortController()
        const agent = await request("POST", `${projectUrl}/agents`, token, { agent_config_id: configId })
        const agentUrl = `${projectUrl}/agents/${agent.id}`
        const turnEnded = await followTurns(agentUrl, token, abort.signal)
        for (let opened = 0; opened < watchers; opened += 50) {
          await Promise.all(Array.from({ length: Math.min(50, watchers - opened) }, () => watch(agentUrl, token, abort.signal)))
        }
        const turn = agentTurn({ inputsUrl: () => `${agentUrl}/inputs`, turnEnded }, token)
        await driveTurns([turn], WARM_UP_SECONDS)
        const cpuBefore = server.cpuMilliseconds()
        const ownCpuBefore = ownCpuMilliseconds()
        const { elapsed, latencies } = await driveTurns([turn])
        const turns = Math.max(latencies.length, 1)
        rows.push(...turnRows(label, latencies, elapsed))
        rows.push({ name: `server CPU per turn, ${label}`, value: (server.cpuMilliseconds() - cpuBefore) / turns, unit: "ms" })
        rows.push({ name: `client CPU per turn, ${label}`, value: (ownCpuMilliseconds() - ownCpuBefore) / turns, unit: "ms" })
        abort.abort()
      }
      return rows
    }))
