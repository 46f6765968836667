/**
 * The soak (run only when asked: `BENCH_SOAK_MINUTES=10 npm run bench -- soak`): the server as a
 * child process in production mode, 100 agents each sending an input, waiting for its turn to
 * end, and sending the next, for BENCH_SOAK_MINUTES (default 10), against the scripted provider
 * answering at once. The server's resident memory (VmRSS of /proc/<pid>/status) is sampled every
 * 10 s and printed as a series, with the first and the last minute's averages and their ratio:
 * a ratio well above 1 under a steady load is a leak to look for. The RSS alone does not tell:
 * V8 lets the heap grow well past what is reachable before it collects. So the server also
 * reports its heap used after every full garbage collection (bench/heapAfterGc.ts), the live
 * heap, and the heap's size V8 kept then (most of the RSS), printed the same way.
 *
 * The same load runs BENCH_SOAK_WARMUP_SECONDS (default 60) before the measured minutes: from idle,
 * V8 grows its heap to what the load needs over the first 30 s or so, which a first minute that
 * included it would count as growth (docs/performance-record.md, "Memory after a warm-up"). The warm-up's
 * RSS is printed too, at negative seconds.
 *
 * On the embedded database by default; BENCH_SOAK_DATABASE=postgres uses a fresh database on the
 * local Postgres (DATABASE_URL's server when set), dropped afterwards.
 */
import { Effect } from "effect"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Reply, startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import { createFleet } from "./AgentFleet.ts"
import { createDatabase, type FreshDatabase, newToken, ROOT, startProcess, temporaryDataDir } from "./Harness.ts"

export const SOAK_MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 10)
const WARMUP_SECONDS = Number(process.env.BENCH_SOAK_WARMUP_SECONDS ?? 60)
const AGENTS = 100
const SAMPLE_INTERVAL_MS = 10_000
const TURN_POLL_MS = 500

interface FullCollection {
  readonly seconds: number
  readonly liveHeapMiB: number
  readonly heapSizeMiB: number
  readonly rssMiB: number
  readonly arrayBuffersMiB: number
}

export interface SoakResult {
  readonly target: string
  readonly minutes: number
  readonly warmupSeconds: number
  /** Seconds since the measured minutes' start (negative in the warm-up), RSS in MiB. */
  readonly samples: ReadonlyArray<{ readonly seconds: number; readonly rssMiB: number }>
  /**
   * At each full garbage collection: seconds since the measured minutes' start, the heap used right
   * after it (the live heap), the heap's size and the RSS then, in MiB.
   */
  readonly fullCollections: ReadonlyArray<FullCollection>
  readonly turns: number
  readonly errors: number
}

/** The pid of the server listening on `port`: the process whose environment holds PORT=<port> and that runs src/main.ts. */
export const serverPid = (port: number): number => {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8")
      if (!cmdline.includes("src/main.ts")) continue
      if (readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(`PORT=${port}`)) return Number(entry)
    } catch {
      // The process ended meanwhile, or is not ours to read.
    }
  }
  throw new Error(`no server process listens on port ${port}`)
}

/** The lines bench/heapAfterGc.ts wrote, from `started` (the measured minutes' start) on. */
const fullCollectionsOf = (file: string, started: number): ReadonlyArray<FullCollection> =>
  existsSync(file)
    ? readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map((line) => {
      const [at, used, size, rss, arrayBuffers] = line.split(" ").map(Number)
      return {
        seconds: Math.round((at - started) / 1000),
        liveHeapMiB: used / 2 ** 20,
        heapSizeMiB: size / 2 ** 20,
        rssMiB: rss / 2 ** 20,
        arrayBuffersMiB: arrayBuffers / 2 ** 20
      }
    }).filter((sample) => sample.seconds >= 0)
    : []

export const rssMiB = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((text) => text.startsWith("VmRSS:"))
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) / 1024
}

const json = async (method: string, url: string, token: string, body?: unknown) => {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${url} answered ${response.status}: ${text}`)
  return JSON.parse(text) as Record<string, any>
}

/** One agent's loop: an input, its turn to the end, the next input. Returns the turns done and the errors met. */
const driveAgent = async (agentUrl: string, token: string, until: number) => {
  let turns = 0
  let errors = 0
  while (Date.now() < until) {
    try {
      const accepted = await json("POST", `${agentUrl}/inputs`, token, { content_blocks: [{ type: "text", text: "soak" }] })
      for (;;) {
        const turn = await json("GET", `${agentUrl}/turns/${accepted.event.turn_id}`, token)
        if (turn.status !== "running" && turn.status !== "waiting") break
        await new Promise((resolve) => setTimeout(resolve, TURN_POLL_MS))
      }
      turns++
    } catch {
      errors++
      await new Promise((resolve) => setTimeout(resolve, 1_000))
    }
  }
  return { turns, errors }
}

export const soak = async (minutes: number): Promise<SoakResult> => {
  const onPostgres = process.env.BENCH_SOAK_DATABASE === "postgres"
  const database: FreshDatabase | undefined = onPostgres ? await createDatabase() : undefined
  const dataDir = temporaryDataDir()
  const { close, provider } = await startScriptedProvider({ record: false })
  try {
    await Effect.runPromise(provider.answerByDefault(Reply.text("ok")))
    const token = newToken()
    const heapLog = join(dataDir.dir, "heap-after-gc.log")
    const server = await startProcess("src/main.ts", {
      DATA_DIR: dataDir.dir,
      AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
      BENCH_HEAP_LOG: heapLog,
      ...(database === undefined ? {} : { DATABASE_URL: database.url })
    }, [pathToFileURL(join(ROOT, "bench/heapAfterGc.ts")).href])
    try {
      const pid = serverPid(Number(new URL(server.baseUrl).port))
      const fleet = await createFleet({ baseUrl: server.baseUrl, token }, provider.baseUrl("openai-responses"), "soak-1", AGENTS)
      const projectUrl = `${server.baseUrl}/v1/orgs/${fleet.projectPath.orgID}/projects/${fleet.projectPath.projectID}`
      const started = Date.now() + WARMUP_SECONDS * 1000
      const until = started + minutes * 60_000
      const samples: Array<{ seconds: number; rssMiB: number }> = []
      const sample = () => samples.push({ seconds: Math.round((Date.now() - started) / 1000), rssMiB: rssMiB(pid) })
      sample()
      const sampler = setInterval(sample, SAMPLE_INTERVAL_MS)
      const results = await Promise.all(fleet.agents.map((agent) => driveAgent(`${projectUrl}/agents/${agent}`, token, until)))
      clearInterval(sampler)
      sample()
      return {
        target: onPostgres ? "Postgres" : "embedded PGlite",
        minutes,
        warmupSeconds: WARMUP_SECONDS,
        samples,
        fullCollections: fullCollectionsOf(heapLog, started),
        turns: results.reduce((sum, result) => sum + result.turns, 0),
        errors: results.reduce((sum, result) => sum + result.errors, 0)
      }
    } finally {
      await server.stop()
    }
  } finally {
    await close()
    dataDir.remove()
    await database?.drop()
  }
}

const average = (values: ReadonlyArray<number>) => values.reduce((sum, value) => sum + value, 0) / Math.max(values.length, 1)

/** The averages of the minute from `from` on and of the last minute's values, and their ratio. */
const firstAndLastMinute = (series: ReadonlyArray<{ readonly seconds: number; readonly value: number }>, end: number, from = 0) => {
  const first = average(series.filter((s) => s.seconds >= from && s.seconds < from + 60).map((s) => s.value))
  const last = average(series.filter((s) => s.seconds > end - 60).map((s) => s.value))
  return `first minute ${first.toFixed(0)} MiB, last minute ${last.toFixed(0)} MiB, ratio ${(last / first).toFixed(2)}`
}

export const formatSoak = (result: SoakResult): string => {
  const end = result.samples[result.samples.length - 1]?.seconds ?? 0
  const live = result.fullCollections.map((s) => ({ seconds: s.seconds, value: s.liveHeapMiB }))
  const size = result.fullCollections.map((s) => ({ seconds: s.seconds, value: s.heapSizeMiB }))
  // The history cache's bytes, mostly, which grow with the conversations up to the cache's bound.
  const arrayBuffers = result.fullCollections.map((s) => ({ seconds: s.seconds, value: s.arrayBuffersMiB }))
  // Node's and V8's memory besides the heap's size and the ArrayBuffers (docs/performance-record.md,
  // "What the profiles' socket writes and the soak's growth are made of"); on the embedded
  // database, PGlite's WebAssembly memory too (not counted among the ArrayBuffers).
  const outsideHeap = result.fullCollections.map((s) => ({ seconds: s.seconds, value: s.rssMiB - s.heapSizeMiB - s.arrayBuffersMiB }))
  const rss = (samples: ReadonlyArray<{ readonly rssMiB: number }>) => samples.map((s) => s.rssMiB.toFixed(0)).join(" ")
  const rssSeries = result.samples.map((s) => ({ seconds: s.seconds, value: s.rssMiB }))
  const seconds = result.minutes * 60 + result.warmupSeconds
  return [
    `Soak on ${result.target}: ${AGENTS} agents for ${result.minutes} min after ${result.warmupSeconds} s of warm-up, ` +
    `${result.turns} turns in all (${(result.turns / seconds).toFixed(1)}/s), ${result.errors} errors`,
    `  RSS every ${SAMPLE_INTERVAL_MS / 1000} s (MiB), warm-up: ${rss(result.samples.filter((s) => s.seconds < 0))}`,
    `  RSS every ${SAMPLE_INTERVAL_MS / 1000} s (MiB), measured: ${rss(result.samples.filter((s) => s.seconds >= 0))}`,
    `  ${firstAndLastMinute(rssSeries, end)}`,
    `  counted from the load's start instead (the warm-up's first minute): ${firstAndLastMinute(rssSeries, end, -result.warmupSeconds)}`,
    `  live heap after each of ${live.length} full collections (MiB): ${live.map((s) => s.value.toFixed(0)).join(" ")}`,
    `  ${firstAndLastMinute(live, end)}`,
    `  heap size V8 kept at those collections (MiB): ${size.map((s) => s.value.toFixed(0)).join(" ")}`,
    `  ${firstAndLastMinute(size, end)}`,
    `  ArrayBuffers (outside the heap) at those collections (MiB): ${arrayBuffers.map((s) => s.value.toFixed(0)).join(" ")}`,
    `  ${firstAndLastMinute(arrayBuffers, end)}`,
    `  RSS less the heap's size and the ArrayBuffers at those collections (MiB): ${outsideHeap.map((s) => s.value.toFixed(0)).join(" ")}`,
    `  ${firstAndLastMinute(outsideHeap, end)}`
  ].join("\n")
}
