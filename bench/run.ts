/**
 * `npm run bench`: runs every benchmark, one after the other (they would compete for the CPU),
 * and prints three tables: HTTP throughput (each HTTP benchmark is a `Benchmark` of
 * bench/Harness.ts; add it to HTTP_BENCHMARKS), the agent runtime's figures (bench/runtime.ts),
 * and the runtime on 1, 2 and 3 server processes sharing one Postgres (bench/scaleOut.ts).
 * BENCH_DURATION_SECONDS (default 10) sets the length of each measurement.
 */
import { cpus, loadavg } from "node:os"
import { type Benchmark, CONNECTIONS, DURATION_SECONDS, formatTable, type Row } from "./Harness.ts"
import { agentConfigs } from "./agentConfigs.ts"
import { orgGet } from "./orgGet.ts"
import { runtime, type RuntimeRow } from "./runtime.ts"
import { scaleOut } from "./scaleOut.ts"

const HTTP_BENCHMARKS: ReadonlyArray<Benchmark> = [orgGet, agentConfigs]

const rows: Array<Row> = []
for (const benchmark of HTTP_BENCHMARKS) {
  rows.push(...(await benchmark()))
}
const runtimeRows = await runtime()
const scaleOutRows = await scaleOut()

console.log(
  `${CONNECTIONS} connections, ${DURATION_SECONDS} s per case, node ${process.version}, ` +
    `load average ${loadavg().map((load) => load.toFixed(1)).join(" ")}\n`
)
console.log(formatTable(rows))

const printRows = (title: string, runtimeTable: ReadonlyArray<RuntimeRow>) => {
  console.log(`\n${title}\n`)
  const nameWidth = Math.max(...runtimeTable.map((row) => row.name.length), 4)
  console.log(`${"name".padEnd(nameWidth)}  ${"value".padStart(10)}  unit`)
  for (const row of runtimeTable) {
    console.log(`${row.name.padEnd(nameWidth)}  ${row.value.toFixed(1).padStart(10)}  ${row.unit}`)
  }
}
printRows("Agent runtime (scripted provider answering at once)", runtimeRows)
printRows(
  `Several server processes on one Postgres (inputs round-robin over them). This machine has ${cpus().length} ` +
    `cores, shared by every process: more processes than cores show what scale-out costs, not a speed-up.`,
  scaleOutRows.length > 0 ? scaleOutRows : [{ name: "skipped: no Postgres reachable", value: 0, unit: "" }]
)
