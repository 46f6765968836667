/**
 * The JSON body scanner every request body goes through (src/layers/http/JsonScanner.ts), in
 * this process, fed in 64 KiB chunks as a socket delivers them: a 1 KiB body (an ordinary
 * request), and 10 MiB bodies of the two shapes at the ends of the range, one inline media block
 * (a long base64 string, through the content block budget) and 10 MiB of small objects (the most
 * tokens per byte). Each is compared with JSON.parse of the same text, which every body pays
 * anyway. `bodyScanner()` returns rows `{ name, value, unit }`; `npx tsx bench/bodyScanner.ts`
 * prints them alone.
 */
import { ContentBlockBudget } from "../src/layers/http/ContentBlockBudget.ts"
import { JsonScanner } from "../src/layers/http/JsonScanner.ts"
import type { RuntimeRow } from "./runtime.ts"

const CHUNK = 64 * 1024
const MiB = 1024 * 1024

const smallBody = () => {
  const body = {
    name: "Quarterly report agent",
    description: "Summarises the quarter's numbers — with an é and a 😀 — for the finance team.",
    metadata: { team: "finance", tags: ["q3", "report", "summary"], owner: { id: "usr_abcdefghijklmnopqrstuvwxyz", level: 3 } },
    content_blocks: [{ type: "text", text: "Please summarise the attached numbers.\nKeep it short.".repeat(13) }]
  }
  return Buffer.from(JSON.stringify(body))
}

const mediaBody = () =>
  Buffer.from(JSON.stringify({
    outcome: "succeeded",
    content_blocks: [
      { type: "text", text: "The chart:" },
      { type: "media", media_type: "image/png", data: Buffer.alloc(Math.floor((10 * MiB * 3) / 4), 7).toString("base64") }
    ]
  }))

const objectsBody = () => {
  const items: Array<unknown> = []
  let size = 0
  while (size < 10 * MiB) {
    const item = { id: items.length, name: `item ${items.length}`, ok: items.length % 2 === 0, score: items.length / 7 }
    size += JSON.stringify(item).length + 1
    items.push(item)
  }
  return Buffer.from(JSON.stringify({ items }))
}

const scan = (body: Buffer, contentBlocks: boolean) => {
  const scanner = new JsonScanner(contentBlocks ? new ContentBlockBudget([["content_blocks"]]) : undefined)
  for (let offset = 0; offset < body.length; offset += CHUNK) {
    const problem = scanner.write(body.subarray(offset, offset + CHUNK))
    if (problem !== undefined) throw new Error(problem.error)
  }
  const problem = scanner.end()
  if (problem !== undefined) throw new Error(problem.error)
}

/** Median milliseconds of `f` over `runs` runs, after a few to warm up. */
const time = (f: () => void, runs: number) => {
  for (let i = 0; i < Math.min(runs, 20); i++) f()
  const samples: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    f()
    samples.push(performance.now() - started)
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]
}

export const bodyScanner = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  const cases = [
    { name: "1 KiB body", body: smallBody(), runs: 20_000, unit: "µs", scale: 1000 },
    { name: "10 MiB, one media block", body: mediaBody(), runs: 30, unit: "ms", scale: 1 },
    { name: "10 MiB of small objects", body: objectsBody(), runs: 30, unit: "ms", scale: 1 }
  ]
  const rows: Array<RuntimeRow> = []
  for (const { body, name, runs, scale, unit } of cases) {
    const scanned = time(() => scan(body, true), runs)
    const parsed = time(() => JSON.parse(body.toString("utf8")), runs)
    rows.push(
      { name: `scan ${name} (${body.length} bytes)`, value: scanned * scale, unit },
      { name: `JSON.parse of the same`, value: parsed * scale, unit },
      { name: `scan throughput, ${name}`, value: body.length / MiB / (scanned / 1000), unit: "MiB/s" }
    )
  }
  return rows
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await bodyScanner()) console.log(`${row.name.padEnd(48)} ${row.value.toFixed(1).padStart(10)} ${row.unit}`)
}
