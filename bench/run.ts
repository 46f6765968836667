/**
 * `npm run bench`: runs the benchmarks one after the other (they would compete for the CPU) and
 * prints, in order: HTTP throughput (each HTTP benchmark is a `Benchmark` of bench/Harness.ts; add
 * it to HTTP_BENCHMARKS), the agent runtime's figures (bench/runtime.ts), one agent's turns watched by
 * many event streams (bench/streamFanout.ts), statements per turn
 * (bench/statements.ts), events appended across agents (bench/appends.ts), a long-lived agent's turns
 * (bench/longHistory.ts), what the history cache holds a turn (bench/historyMemory.ts), what a request costs
 * the server's JavaScript, measured in its process without a connection (bench/requestCost.ts), built-in tool round trips
 * through a real daemon (bench/machines.ts), a request's cost to the daemon's ledger (bench/daemonLedger.ts),
 * machines from pools cold and warm (bench/pools.ts), event streams' memory when not read and their catch-up
 * (bench/streamMemory.ts), the crash loop
 * (bench/crashLoop.ts), and the soak (bench/soak.ts) when BENCH_SOAK_MINUTES is set. What the framework costs
 * (bench/frameworks.ts, minimal programs on Effect 3 and Effect 4) and this server beside Mastra and the
 * LangGraph.js Agent Server (bench/competitors.ts) run only when named: they install their packages.
 * So does `ab` (bench/ab.ts): this checkout against the revision BENCH_AB_BASE names, at 100 agents
 * on Postgres, in alternate rounds.
 * BENCH_DURATION_SECONDS (default 10) sets the length of each HTTP and runtime measurement.
 *
 * Run a part alone by name: `npm run bench -- crash-loop` or `BENCH_ONLY=crash-loop`
 * (names: http, runtime, fanout, statements, appends, long-history, history-memory, request-cost, machines, ledger, pools, scale-out, scanner, streams, crash-loop, soak, frameworks, competitors, ab; several with
 * commas). A broken crash-loop invariant makes the run exit non-zero.
 */
import { cpus, loadavg } from "node:os"
import { ab } from "./ab.ts"
import { agentConfigs } from "./agentConfigs.ts"
import { appends } from "./appends.ts"
import { bodyScanner } from "./bodyScanner.ts"
import { competitors } from "./competitors.ts"
import { crashLoop, formatCrashLoop } from "./crashLoop.ts"
import { daemonLedger } from "./daemonLedger.ts"
import { frameworks } from "./frameworks.ts"
import { historyMemory } from "./historyMemory.ts"
import { type Benchmark, CONNECTIONS, DURATION_SECONDS, formatTable, type Row } from "./Harness.ts"
import { longHistory } from "./longHistory.ts"
import { machines } from "./machines.ts"
import { orgGet } from "./orgGet.ts"
import { pools } from "./pools.ts"
import { requestCost } from "./requestCost.ts"
import { runtime } from "./runtime.ts"
import { scaleOut } from "./scaleOut.ts"
import { formatSoak, soak, SOAK_MINUTES } from "./soak.ts"
import { statements } from "./statements.ts"
import { streamFanout } from "./streamFanout.ts"
import { streamMemory } from "./streamMemory.ts"

/** Prints `{name, value, unit}` rows as an aligned table. */
const printRows = (rows: ReadonlyArray<{ readonly name: string; readonly value: number; readonly unit: string }>) => {
  const nameWidth = Math.max(...rows.map((row) => row.name.length), 4)
  console.log(`${"name".padEnd(nameWidth)}  ${"value".padStart(10)}  unit`)
  for (const row of rows) {
    console.log(`${row.name.padEnd(nameWidth)}  ${row.value.toFixed(1).padStart(10)}  ${row.unit}`)
  }
}

const HTTP_BENCHMARKS: ReadonlyArray<Benchmark> = [orgGet, agentConfigs]
const PARTS = ["http", "runtime", "fanout", "statements", "appends", "long-history", "history-memory", "request-cost", "machines", "ledger", "pools", "scale-out", "scanner", "streams", "crash-loop", "soak", "frameworks", "competitors", "ab"] as const

const only = (process.argv[2] ?? process.env.BENCH_ONLY)?.split(",").map((name) => name.trim())
const unknown = only?.filter((name) => !(PARTS as ReadonlyArray<string>).includes(name)) ?? []
if (unknown.length > 0) throw new Error(`unknown benchmark ${unknown.join(", ")}; the parts are ${PARTS.join(", ")}`)
const selected = (part: typeof PARTS[number]) =>
  only === undefined
    ? (part !== "soak" || process.env.BENCH_SOAK_MINUTES !== undefined) && part !== "frameworks" && part !== "competitors" &&
      part !== "ab"
    : only.includes(part)

if (selected("http")) {
  const rows: Array<Row> = []
  for (const benchmark of HTTP_BENCHMARKS) {
    rows.push(...(await benchmark()))
  }
  console.log(
    `${CONNECTIONS} connections, ${DURATION_SECONDS} s per case, node ${process.version}, ` +
      `load average ${loadavg().map((load) => load.toFixed(1)).join(" ")}\n`
  )
  console.log(formatTable(rows))
}

if (selected("runtime")) {
  const runtimeRows = await runtime()
  console.log("\nAgent runtime (scripted provider answering at once)\n")
  printRows(runtimeRows)
}

if (selected("fanout")) {
  const fanoutRows = await streamFanout()
  console.log("\nOne agent's turns watched by many event streams\n")
  printRows(fanoutRows)
}

if (selected("statements")) {
  const statementRows = await statements()
  console.log("\nSQL statements per turn on Postgres (counted by a wire-protocol proxy; docs/performance.md)\n")
  printRows(statementRows)
}

if (selected("appends")) {
  const appendRows = await appends()
  console.log("\nEvents appended across agents (inputs queued behind held turns; docs/performance.md)\n")
  printRows(appendRows)
}

if (selected("long-history")) {
  const historyRows = await longHistory()
  console.log("\nA long-lived agent: a turn's cost as its conversation grows (docs/performance.md)\n")
  printRows(historyRows)
}

if (selected("history-memory")) {
  console.log("\nThe history cache: what a cached turn holds, and what its bound counts (docs/performance.md)\n")
  printRows(historyMemory())
}

if (selected("request-cost")) {
  console.log("\nWhat a request costs the server's JavaScript: requests answered in its process, without a connection (docs/performance.md)\n")
  printRows(await requestCost())
}

if (selected("machines")) {
  console.log("\nBuilt-in tools on a machine (a real daemon on loopback; tool_call to tool_result on the timeline)\n")
  printRows(await machines())
}

if (selected("ledger")) {
  console.log("\nThe daemon's request ledger: a request's cost once it is full (docs/daemon-protocol.md)\n")
  printRows(await daemonLedger())
}

if (selected("pools")) {
  console.log("\nMachines from pools: an agent's built-in call when the pool must start its machine, and when it is up\n")
  printRows(await pools())
}

if (selected("scale-out")) {
  const scaleOutRows = await scaleOut()
  console.log(
    `\nSeveral server processes on one Postgres (inputs round-robin over them). This machine has ${cpus().length} ` +
      `cores, shared by every process: more processes than cores show what scale-out costs, not a speed-up.\n`
  )
  printRows(scaleOutRows.length > 0 ? scaleOutRows : [{ name: "skipped: no Postgres reachable", value: 0, unit: "" }])
}

if (selected("scanner")) {
  const scannerRows = await bodyScanner()
  console.log("\nJSON body scanner (in process, 64 KiB chunks; median of repeated runs)\n")
  printRows(scannerRows)
}

if (selected("streams")) {
  console.log("\nEvent streams on Postgres: the server's memory with streams not read, and a stream's catch-up (docs/performance.md)\n")
  const streamRows = await streamMemory()
  printRows(streamRows.length > 0 ? streamRows : [{ name: "skipped: no Postgres reachable", value: 0, unit: "" }])
}

if (selected("crash-loop")) {
  const result = await crashLoop()
  console.log(`\n${formatCrashLoop(result)}`)
  if (!result.ok) process.exitCode = 1
}

if (selected("frameworks")) {
  console.log(
    `\nWhat the framework costs: a request from minimal servers on Effect 3 and Effect 4 beside the baseline and this ` +
      `server, and a durable workflow's round trip on each version (${CONNECTIONS} connections, ${DURATION_SECONDS} s ` +
      `per case, medians of the rounds; docs/performance.md)\n`
  )
  printRows(await frameworks())
}

if (selected("competitors")) {
  console.log(
    `\nThis server beside Mastra and the LangGraph.js Agent Server: conversations each sending a message and waiting ` +
      `for the stored answer, one scripted model server answering at once (${DURATION_SECONDS} s per case, medians of the ` +
      `rounds; docs/performance.md)\n`
  )
  printRows(await competitors())
}

if (selected("ab")) {
  console.log(`\nThis checkout against ${process.env.BENCH_AB_BASE} (alternate rounds; docs/performance.md)\n`)
  const abRows = await ab()
  console.log("")
  printRows(abRows)
}

if (selected("soak")) {
  console.log(`\n${formatSoak(await soak(SOAK_MINUTES))}`)
}
