/**
 * `npm run bench`: runs every benchmark, one after the other (they would compete for the CPU),
 * and prints three tables: HTTP throughput (each HTTP benchmark is a `Benchmark` of
 * bench/Harness.ts; add it to HTTP_BENCHMARKS), then the agent runtime's figures
 * (bench/runtime.ts), then the JSON body scanner every request body goes through
 * (bench/bodyScanner.ts). BENCH_DURATION_SECONDS (default 10) sets the length of each measurement.
 */
import { loadavg } from "node:os"
import { type Benchmark, CONNECTIONS, DURATION_SECONDS, formatTable, type Row } from "./Harness.ts"
import { agentConfigs } from "./agentConfigs.ts"
import { bodyScanner } from "./bodyScanner.ts"
import { orgGet } from "./orgGet.ts"
import { runtime } from "./runtime.ts"

const HTTP_BENCHMARKS: ReadonlyArray<Benchmark> = [orgGet, agentConfigs]

const rows: Array<Row> = []
for (const benchmark of HTTP_BENCHMARKS) {
  rows.push(...(await benchmark()))
}
const runtimeRows = await runtime()
const scannerRows = await bodyScanner()

console.log(
  `${CONNECTIONS} connections, ${DURATION_SECONDS} s per case, node ${process.version}, ` +
    `load average ${loadavg().map((load) => load.toFixed(1)).join(" ")}\n`
)
console.log(formatTable(rows))
console.log("\nAgent runtime (scripted provider answering at once)\n")
const nameWidth = Math.max(...runtimeRows.map((row) => row.name.length), 4)
console.log(`${"name".padEnd(nameWidth)}  ${"value".padStart(10)}  unit`)
for (const row of runtimeRows) {
  console.log(`${row.name.padEnd(nameWidth)}  ${row.value.toFixed(1).padStart(10)}  ${row.unit}`)
}
console.log("\nJSON body scanner (in process, 64 KiB chunks; median of repeated runs)\n")
for (const row of scannerRows) {
  console.log(`${row.name.padEnd(nameWidth)}  ${row.value.toFixed(1).padStart(10)}  ${row.unit}`)
}
