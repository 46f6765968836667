/**
 * Loaded into the server's process by bench/requestCost.ts (`--import`): once the server answers
 * on its port, sets up a project over HTTP (runtime.ts's `setUp`, the scripted provider at
 * BENCH_PROVIDER_URL holding every model call) with the appends' AGENTS agents each in a held turn (appends.ts), then sends
 * the server's listener requests in process (InProcessRequest.ts), CONCURRENCY at a time, in rounds
 * of about a second: the process's CPU (every thread's) and the wall time of each measured round,
 * divided by its requests. Writes them as JSON to BENCH_REQUEST_COST_OUT.
 */
import { writeFileSync } from "node:fs"
import { Server } from "node:http"
import { busyAgentPaths } from "./appends.ts"
import { answerInProcess } from "./InProcessRequest.ts"
import { setUp } from "./runtime.ts"

const CONCURRENCY = 32
const ROUNDS = 8
const WARM_UP_ROUNDS = 3
/** Inputs each agent gets a round: (WARM_UP_ROUNDS + ROUNDS) × 5 queued, within the backlog's 100. */
const INPUTS_A_ROUND = 5

/** One round of a kind: microseconds a request. */
export interface RoundCost {
  readonly cpu: number
  readonly wall: number
}

/** The server's node:http listener: the first to listen in this process. */
let server: Server | undefined
const listen = Server.prototype.listen
Server.prototype.listen = function(this: Server, ...args: Array<unknown>) {
  server ??= this
  return Reflect.apply(listen, this, args)
} as typeof listen

const token = process.env.AGENT_PLATFORM_BOOTSTRAP_TOKEN!
const baseUrl = `http://127.0.0.1:${process.env.PORT}`

/** Sends each request of `paths`, CONCURRENCY at a time; every answer must be `status`. The requests sent. */
const sendAll = async (method: string, paths: ReadonlyArray<string>, status: number, body?: string) => {
  const headers = { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) }
  let next = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < paths.length) {
      const path = paths[next++]
      const answered = await answerInProcess(server!, method, path, headers, body)
      if (answered !== status) throw new Error(`${method} ${path} answered ${answered}, not ${status}`)
    }
  }))
  return paths.length
}

const repeated = (paths: ReadonlyArray<string>, times: number) => Array.from({ length: times }, () => paths).flat()

/** Sets up the project and its busy agents; then, by kind of request, a round of it (about a second of requests). */
const roundsByKind = async () => {
  const { configId, projectUrl } = await setUp(baseUrl, token, process.env.BENCH_PROVIDER_URL!)
  const org = new URL(projectUrl).pathname.split("/projects/")[0]
  const inputs = await busyAgentPaths(projectUrl, configId, token)
  const input = JSON.stringify({ content_blocks: [{ type: "text", text: "later" }] })
  return {
    "GET /healthz": () => sendAll("GET", repeated(["/healthz"], 20_000), 200),
    "GET /v1/orgs/{orgID}": () => sendAll("GET", repeated([org], 5_000), 200),
    "POST an input to a busy agent": () => sendAll("POST", repeated(inputs, INPUTS_A_ROUND), 201, input)
  }
}

/**
 * WARM_UP_ROUNDS rounds of each kind, unmeasured (the JIT, the pools, the heap's size), then
 * ROUNDS of each kind in a row: taking turns, a kind's rounds would pay for the garbage of the
 * kind before (the inputs leave the most).
 */
const measure = async () => {
  const kinds = Object.entries(await roundsByKind())
  for (let index = 0; index < WARM_UP_ROUNDS; index++) for (const [, round] of kinds) await round()
  const costs: Record<string, Array<RoundCost>> = {}
  for (const [kind, round] of kinds) {
    for (let index = 0; index < ROUNDS; index++) {
      const cpuBefore = process.cpuUsage()
      const started = performance.now()
      const requests = await round()
      const cpu = process.cpuUsage(cpuBefore)
      ;(costs[kind] ??= []).push({ cpu: (cpu.user + cpu.system) / requests, wall: ((performance.now() - started) * 1000) / requests })
    }
  }
  return costs
}

/** Waits until the server answers on its port. */
const ready = async () => {
  for (;;) {
    const answered = await fetch(`${baseUrl}/healthz`).then((response) => response.ok, () => false)
    if (answered && server !== undefined) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

void ready().then(measure).then(
  (costs) => writeFileSync(process.env.BENCH_REQUEST_COST_OUT!, JSON.stringify({ costs })),
  (error) => writeFileSync(process.env.BENCH_REQUEST_COST_OUT!, JSON.stringify({ error: String(error) }))
)
