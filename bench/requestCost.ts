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
 * On Postgres the `node:http` + `pg` baseline (bench/baselineServer.ts, the same work for these
 * three routes with none of the framework) is measured the same way afterwards, on the same
 * database, with bench/requestCostBaselineDriver.ts loaded: the two processes' JavaScript side by
 * side, which the appends' figures over connections (bench/appends.ts) mix with the sockets' and
 * the clients' costs.
 *
 * Rows, on the embedded PGlite (whose statements run in the server's process, so they are counted)
 * and then on a fresh Postgres database when one is reachable (whose processes are not), this
 * server's and then the baseline's: the median of the rounds' CPU a request (every thread of the
 * process) and of their wall time, and the CPU's interquartile range.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Reply } from "../test/support/ScriptedProvider.ts"
import { newToken, ROOT, startProcess, temporaryDataDir } from "./Harness.ts"
import type { RequestCostOutput, RoundCost } from "./requestCostRounds.ts"
import { onEachDatabase, percentile, type RuntimeRow } from "./runtime.ts"

const DRIVER = pathToFileURL(join(ROOT, "bench/requestCostDriver.ts")).href
const BASELINE_DRIVER = pathToFileURL(join(ROOT, "bench/requestCostBaselineDriver.ts")).href
/** How long a driver may take, set-up included. */
const TIMEOUT_MS = 600_000

/** The rounds by kind of request that a driver wrote to `out`, and what its set-up made, once it has written them. */
const awaitOutput = async (out: string) => {
  const deadline = Date.now() + TIMEOUT_MS
  while (!existsSync(out)) {
    if (Date.now() > deadline) throw new Error("the request-cost driver did not finish in time")
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const output = JSON.parse(readFileSync(out, "utf8")) as RequestCostOutput
  if (output.costs === undefined) throw new Error(`the request-cost driver failed: ${output.error}`)
  return { costs: output.costs, made: output.made }
}

type Costs = Record<string, ReadonlyArray<RoundCost>>

/**
 * The driver's rounds on this server started with `env`, by kind of request; on Postgres, the
 * baseline's too, run on the same database (while this server idles) against busy agents this
 * server made for it.
 */
const driven = async (env: Record<string, string>, providerUrl: string): Promise<{ server: Costs; baseline?: Costs }> => {
  const dataDir = temporaryDataDir()
  const out = (name: string) => join(dataDir.dir, name)
  const onPostgres = env.DATABASE_URL !== undefined
  const token = newToken()
  try {
    const server = await startProcess(
      "src/main.ts",
      {
        ...env,
        DATA_DIR: dataDir.dir,
        AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
        BENCH_PROVIDER_URL: providerUrl,
        BENCH_REQUEST_COST_OUT: out("server.json"),
        BENCH_REQUEST_COST_BASELINE: onPostgres ? "1" : "0"
      },
      [DRIVER]
    )
    try {
      const measured = await awaitOutput(out("server.json"))
      if (!onPostgres) return { server: measured.costs }
      const baseline = await startProcess(
        "bench/baselineServer.ts",
        {
          DATABASE_URL: env.DATABASE_URL,
          BENCH_REQUEST_COST_OUT: out("baseline.json"),
          BENCH_REQUEST_COST_PATHS: JSON.stringify(measured.made),
          BENCH_REQUEST_COST_TOKEN: token
        },
        [BASELINE_DRIVER]
      )
      try {
        return { server: measured.costs, baseline: (await awaitOutput(out("baseline.json"))).costs }
      } finally {
        await baseline.stop()
      }
    } finally {
      await server.stop()
    }
  } finally {
    dataDir.remove()
  }
}

const rows = (costs: Costs, target: string): Array<RuntimeRow> =>
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
  onEachDatabase(Reply.hang(), async (target, env, providerUrl) => {
    const { baseline, server } = await driven(env, providerUrl)
    return [...rows(server, target), ...(baseline === undefined ? [] : rows(baseline, `${target}, baseline node:http + pg`))]
  })
