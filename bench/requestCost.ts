/**
 * What a request costs the server's JavaScript, measured in its own process (docs/performance.md):
 * the server runs as a child process with bench/requestCostDriver.ts loaded, which sends its
 * listener requests without a connection (InProcessRequest.ts) and times rounds of each kind: GET
 * /healthz (the guards, the router and the log line around a handler that reads nothing), the
 * authenticated GET of an organization (two reads), and an input queued to an agent in a held turn
 * (the appends' request: a body, two statements, an event). Without the sockets' and the load
 * generator's costs the rounds spread by a few per cent, so a change of a few microseconds a
 * request shows, which `http` (autocannon on the same cores) cannot resolve.
 *
 * Rows, on the embedded PGlite (whose statements run in the server's process, so they are counted)
 * and then on a fresh Postgres database when one is reachable (whose processes are not): the
 * median of the rounds' CPU a request (every thread of the process) and of their wall time, and
 * the CPU's interquartile range.
 */
import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Reply } from "../test/support/ScriptedProvider.ts"
import { newToken, ROOT, startProcess, temporaryDataDir } from "./Harness.ts"
import type { RoundCost } from "./requestCostDriver.ts"
import { onEachDatabase, percentile, type RuntimeRow } from "./runtime.ts"

const DRIVER = pathToFileURL(join(ROOT, "bench/requestCostDriver.ts")).href
/** How long the driver may take, set-up included. */
const TIMEOUT_MS = 600_000

/** The driver's rounds on a server started with `env`, by kind of request. */
const driven = async (env: Record<string, string>, providerUrl: string): Promise<Record<string, ReadonlyArray<RoundCost>>> => {
  const dataDir = temporaryDataDir()
  const out = join(dataDir.dir, "request-cost.json")
  try {
    const server = await startProcess(
      "src/main.ts",
      { ...env, DATA_DIR: dataDir.dir, AGENT_PLATFORM_BOOTSTRAP_TOKEN: newToken(), BENCH_PROVIDER_URL: providerUrl, BENCH_REQUEST_COST_OUT: out },
      [DRIVER]
    )
    try {
      const deadline = Date.now() + TIMEOUT_MS
      while (!existsSync(out)) {
        if (Date.now() > deadline) throw new Error("the request-cost driver did not finish in time")
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    } finally {
      await server.stop()
    }
    const result = JSON.parse(readFileSync(out, "utf8")) as { costs?: Record<string, ReadonlyArray<RoundCost>>; error?: string }
    if (result.costs === undefined) throw new Error(`the request-cost driver failed: ${result.error}`)
    return result.costs
  } finally {
    rmSync(out, { force: true })
    dataDir.remove()
  }
}

const rows = (costs: Record<string, ReadonlyArray<RoundCost>>, target: string): Array<RuntimeRow> =>
  Object.entries(costs).flatMap(([kind, rounds]) => {
    const cpu = rounds.map((round) => round.cpu).sort((a, b) => a - b)
    const wall = rounds.map((round) => round.wall).sort((a, b) => a - b)
    return [
      { name: `CPU per request in process, ${kind}, ${target}`, value: percentile(cpu, 0.5), unit: "µs" },
      { name: `  its interquartile range`, value: percentile(cpu, 0.75) - percentile(cpu, 0.25), unit: "µs" },
      { name: `  wall time per request (${rounds.length} rounds, 32 at a time)`, value: percentile(wall, 0.5), unit: "µs" }
    ]
  })

export const requestCost = (): Promise<ReadonlyArray<RuntimeRow>> =>
  onEachDatabase(Reply.hang(), async (target, env, providerUrl) => rows(await driven(env, providerUrl), target))
