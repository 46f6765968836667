/**
 * `npm run bench`: runs every benchmark in BENCHMARKS, one after the other (they would compete
 * for the CPU), and prints their rows as one table. A benchmark is a module exporting a
 * `Benchmark` (bench/Harness.ts): an async function that returns rows; add it to the list.
 * BENCH_DURATION_SECONDS (default 10) sets the length of each measurement.
 */
import { loadavg } from "node:os"
import { type Benchmark, CONNECTIONS, DURATION_SECONDS, formatTable, type Row } from "./Harness.ts"
import { agentConfigs } from "./agentConfigs.ts"
import { orgGet } from "./orgGet.ts"

const BENCHMARKS: ReadonlyArray<Benchmark> = [orgGet, agentConfigs]

const rows: Array<Row> = []
for (const benchmark of BENCHMARKS) {
  rows.push(...(await benchmark()))
}
console.log(
  `${CONNECTIONS} connections, ${DURATION_SECONDS} s per case, node ${process.version}, ` +
    `load average ${loadavg().map((load) => load.toFixed(1)).join(" ")}\n`
)
console.log(formatTable(rows))
