/**
 * The rounds of `npm run bench -- request-cost` (bench/requestCost.ts), run inside the process
 * under measurement by the module it loads with `--import` (bench/requestCostDriver.ts for this
 * server, bench/requestCostBaselineDriver.ts for the `node:http` + `pg` baseline). `measureRounds`
 * waits until the process answers on its port, asks its driver's set-up for the kinds of request to
 * time, sends each its listener in process (InProcessRequest.ts), CONCURRENCY at a time, in rounds
 * of about a second: the process's CPU (every thread's) and the wall time of each measured round,
 * divided by its requests. Writes them as JSON to BENCH_REQUEST_COST_OUT.
 */
import { writeFileSync } from "node:fs"
import { Server } from "node:http"
import { answerInProcess } from "./InProcessRequest.ts"

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

/** What the driver writes: the rounds by kind of request, and what its set-up made for the next process to use. */
export interface RequestCostOutput {
  readonly costs?: Record<string, ReadonlyArray<RoundCost>>
  readonly made?: unknown
  readonly error?: string
}

/** A kind of request: one round of it, the number of requests it sent. */
export type Round = () => Promise<number>

/** The process's node:http listener: the first to listen in it. */
let server: Server | undefined
const listen = Server.prototype.listen
Server.prototype.listen = function(this: Server, ...args: Array<unknown>) {
  server ??= this
  return Reflect.apply(listen, this, args)
} as typeof listen

/** The base URL of the process under measurement. */
export const baseUrl = `http://127.0.0.1:${process.env.PORT}`

/** Sends each request of `paths`, CONCURRENCY at a time; every answer must be `status`. The requests sent. */
const sendAll = async (
  method: string,
  paths: ReadonlyArray<string>,
  status: number,
  token: string,
  body?: string
) => {
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

/** The body of every input the rounds send. */
const INPUT_BODY = JSON.stringify({ content_blocks: [{ type: "text", text: "later" }] })

/**
 * The three kinds measured in both processes: GET /healthz, the authenticated GET of the
 * organization at `orgPath`, and an input queued to each agent of `inputPaths` (each in a held turn).
 */
export const standardRounds = (token: string, orgPath: string, inputPaths: ReadonlyArray<string>): Record<string, Round> => ({
  "GET /healthz": () => sendAll("GET", repeated(["/healthz"], 20_000), 200, token),
  "GET /v1/orgs/{orgID}": () => sendAll("GET", repeated([orgPath], 5_000), 200, token),
  "POST an input to a busy agent": () => sendAll("POST", repeated(inputPaths, INPUTS_A_ROUND), 201, token, INPUT_BODY)
})

/**
 * WARM_UP_ROUNDS rounds of each kind, unmeasured (the JIT, the pools, the heap's size), then
 * ROUNDS of each kind in a row: taking turns, a kind's rounds would pay for the garbage of the
 * kind before (the inputs leave the most).
 */
const measure = async (rounds: Record<string, Round>) => {
  const kinds = Object.entries(rounds)
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

/** Waits until the process answers on its port. */
const ready = async () => {
  for (;;) {
    const answered = await fetch(`${baseUrl}/healthz`).then((response) => response.ok, () => false)
    if (answered && server !== undefined) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** What a driver's set-up gives: the rounds by kind of request, and what to make after them for the next process. */
export interface Measured {
  readonly rounds: Record<string, Round>
  readonly after?: () => Promise<unknown>
}

/**
 * Once the process answers: `setUp`'s rounds measured, then its `after` (what it leaves for the
 * next process), written to BENCH_REQUEST_COST_OUT, or the error.
 */
export const measureRounds = (setUp: () => Promise<Measured>) => {
  const write = (output: RequestCostOutput) => writeFileSync(process.env.BENCH_REQUEST_COST_OUT!, JSON.stringify(output))
  void ready().then(setUp).then(async ({ after, rounds }) => write({ costs: await measure(rounds), made: await after?.() }))
    .catch((error) => write({ error: String(error) }))
}
