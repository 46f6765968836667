/**
 * The crash loop (`npm run bench -- crash-loop`): on a fresh Postgres database (dropped after;
 * skipped with a note when Postgres is not reachable), CRASH_LOOP_ROUNDS rounds (default 20) of:
 * start the server as a child process (`npm start`, test/support/Processes.ts), send one input to
 * each of 20 agents (each under its own idempotency key; an input whose POST got no answer is sent
 * again, with the same key, after the next start), and kill the server's process group with
 * SIGKILL at a random moment: in one round of four while the inputs are being posted, otherwise
 * up to 3 s after they were all answered, while turns run and the scripted provider takes
 * ANSWER_DELAY_MS to answer each model call. Half the agents' turns call their custom tool once
 * before answering, and a client answers the calls across the kills (bench/crashLoopAnswerer.ts).
 * Then start it once more, let every turn finish, and check the invariants of
 * bench/crashLoopChecks.ts. Prints the counts; a broken invariant sets a non-zero exit code.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import type { AgentId } from "../src/domain/shared/Ids.ts"
import { killLeftoverServers, type ServerProcess, startServer } from "../test/support/Processes.ts"
import { Reply, type ScriptedReply, startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import { allEvents, allTurns, type Connection, createFleet, type Fleet, sendInput, settle } from "./AgentFleet.ts"
import { answerToolCalls } from "./crashLoopAnswerer.ts"
import {
  type AgentRecord,
  type CrashLoopCounts,
  countModelCalls,
  countTimelines,
  countToolResults,
  type ObservedCall
} from "./crashLoopChecks.ts"
import { createDatabase, newToken, temporaryDataDir } from "./Harness.ts"

const ROUNDS = Number(process.env.CRASH_LOOP_ROUNDS ?? 20)
const AGENTS = 20
/** How long the scripted provider takes to answer each model call. */
const ANSWER_DELAY_MS = 800
/** The kill comes this long after the inputs went out, at most. */
const MAX_KILL_DELAY_MS = 3_000
const SETTLE_TIMEOUT_MS = 180_000

export interface CrashLoopResult {
  readonly note?: string
  readonly counts?: CrashLoopCounts & { readonly rounds: number }
  readonly ok: boolean
}

/** An input with this in its text makes the scripted model call the agent's custom tool first. */
const CALLS_TOOL = "(calls lookup)"

/** The scripted model: the custom tool's call when the turn's input asks for it and no result came yet, otherwise a text. */
const reply = (body: Record<string, any>): ScriptedReply => {
  const input: ReadonlyArray<{ role?: string; type?: string }> = Array.isArray(body.input) ? body.input : []
  const lastUser = input.findLast((item) => item.role === "user")
  return JSON.stringify(lastUser ?? {}).includes(CALLS_TOOL) && input.at(-1)?.type !== "function_call_output"
    ? Reply.answer([{ type: "tool_call", name: "lookup", input: { query: "crash loop" } }], { delay_ms: ANSWER_DELAY_MS })
    : Reply.text("done", { delay_ms: ANSWER_DELAY_MS })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts the server; retries while the killed one's database session (and its runner lock) is not gone yet. */
const start = async (dataDir: string, env: Record<string, string>): Promise<ServerProcess> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServer(dataDir, env)
    } catch (error) {
      if (attempt === 5) throw error
      await sleep(1_000)
    }
  }
}

/** Records when each model call reaches the provider (polled every 20 ms). */
const observeCalls = (requests: () => Promise<ReadonlyArray<ObservedCall["request"]>>) => {
  const calls: Array<ObservedCall> = []
  const timer = setInterval(() => {
    void requests().then((all) => {
      for (const request of all.slice(calls.length)) calls.push({ request, arrivedAt: Date.now() })
    })
  }, 20)
  return { calls, stop: () => clearInterval(timer) }
}

export const crashLoop = async (): Promise<CrashLoopResult> => {
  let database
  try {
    database = await createDatabase()
  } catch (error) {
    return { ok: true, note: `skipped: Postgres is not reachable (${(error as Error).message})` }
  }
  const dataDir = temporaryDataDir()
  const { close, provider } = await startScriptedProvider()
  const observed = observeCalls(() => Effect.runPromise(provider.requests))
  let answerer: ReturnType<typeof answerToolCalls> | undefined
  try {
    await Effect.runPromise(provider.answerByDefault(reply))
    const token = newToken()
    const env = { DATABASE_URL: database.url, AGENT_PLATFORM_BOOTSTRAP_TOKEN: token }
    const slug = `crash-loop-${randomBytes(4).toString("hex")}`
    const keys = new Map<AgentId, Array<string>>()
    /** Inputs whose POST got no answer: sent again after the next start. */
    let unconfirmed: Array<{ agent: AgentId; text: string; key: string }> = []
    const kills: Array<number> = []
    let fleet: Fleet | undefined
    /** The server up now, for the tool's client. */
    let current: Connection | undefined
    const callsTool = (agent: AgentId) => fleet!.agents.indexOf(agent) % 2 === 1
    const send = async (connection: Connection, input: { agent: AgentId; text: string; key: string }) => {
      const turn = await sendInput(connection, fleet!, input.agent, input.text, input.key)
      if (turn === undefined) unconfirmed.push(input)
    }

    for (let round = 1; round <= ROUNDS; round++) {
      const server = await start(dataDir.dir, env)
      const connection = { baseUrl: server.baseUrl, token }
      fleet ??= await createFleet(connection, provider.baseUrl("openai-responses"), slug, AGENTS)
      answerer ??= answerToolCalls(fleet, fleet.agents.filter(callsTool), () => current)
      current = connection
      const retry = unconfirmed
      unconfirmed = []
      const inputs = fleet.agents.map((agent) => ({
        agent,
        text: `agent ${agent} round ${round}${callsTool(agent) ? ` ${CALLS_TOOL}` : ""}`,
        key: `round-${round}-${agent}`
      }))
      for (const input of inputs) keys.set(input.agent, [...(keys.get(input.agent) ?? []), input.key])
      const sending = Promise.all([...retry, ...inputs].map((input) => send(connection, input)))
      // One round in four dies while the inputs are being posted; the others once every input
      // was answered, with turns and model calls in flight.
      if (Math.random() < 0.25) await sleep(Math.random() * MAX_KILL_DELAY_MS / 2)
      else await sending.then(() => sleep(Math.random() * MAX_KILL_DELAY_MS))
      kills.push(Date.now())
      current = undefined
      await server.kill()
      await sending
      console.log(`crash loop: round ${round}/${ROUNDS} killed; ${unconfirmed.length} inputs to send again`)
    }

    const server = await start(dataDir.dir, env)
    const connection = { baseUrl: server.baseUrl, token }
    current = connection
    const retry = unconfirmed
    unconfirmed = []
    await Promise.all(retry.map((input) => send(connection, input)))
    if (unconfirmed.length > 0) throw new Error(`${unconfirmed.length} inputs got no answer from a running server`)
    const busy = await settle(connection, fleet!, SETTLE_TIMEOUT_MS)
    const submitted = await answerer!.stop()
    const records: Array<AgentRecord> = await Promise.all(fleet!.agents.map(async (agent) => ({
      events: await allEvents(connection, fleet!, agent),
      turns: await allTurns(connection, fleet!, agent),
      keys: keys.get(agent) ?? []
    })))
    await server.stop()
    observed.stop()

    const counts: CrashLoopCounts = {
      inputs: 0,
      finished: 0,
      failed: 0,
      cancelled: 0,
      lost: 0,
      duplicated: 0,
      gaps: 0,
      stuck: 0,
      modelCalls: 0,
      repeatedModelCalls: 0,
      repeatedAfterRecorded: 0,
      repeatedWithoutKill: 0,
      longestAnswerToKillMs: 0,
      outputsRecordedTwice: 0,
      toolCalls: 0,
      callsRecordedTwice: 0,
      resultsRecordedTwice: 0,
      resultsLost: 0,
      resultsRefusedAfterLostAnswer: 0,
      resultsRefusedUnexpectedly: 0,
      details: []
    }
    countTimelines(records, counts)
    countToolResults(records, submitted, counts)
    countModelCalls(observed.calls, kills, records, ANSWER_DELAY_MS, counts)
    counts.stuck = Math.max(counts.stuck, busy.length)
    if (counts.repeatedAfterRecorded + counts.repeatedWithoutKill > 0) {
      const start = observed.calls[0]?.arrivedAt ?? 0
      counts.details.push(`kills at ${kills.map((kill) => `+${kill - start}`).join(", ")} ms`)
    }
    const ok = counts.lost === 0 && counts.duplicated === 0 && counts.gaps === 0 && counts.stuck === 0 &&
      counts.outputsRecordedTwice === 0 && counts.repeatedWithoutKill === 0 && counts.callsRecordedTwice === 0 &&
      counts.resultsRecordedTwice === 0 && counts.resultsLost === 0 && counts.resultsRefusedUnexpectedly === 0 &&
      counts.repeatedAfterRecorded === 0 && counts.finished + counts.failed + counts.cancelled === counts.inputs
    return { ok, counts: { rounds: ROUNDS, ...counts } }
  } finally {
    observed.stop()
    await answerer?.stop()
    killLeftoverServers()
    await close()
    dataDir.remove()
    await database.drop()
  }
}

/** The result as printed lines. */
export const formatCrashLoop = (result: CrashLoopResult): string => {
  if (result.counts === undefined) return `Crash loop: ${result.note}`
  const c = result.counts
  return [
    `Crash loop on Postgres: ${c.rounds} rounds, ${AGENTS} agents, kill -9 at a random moment (model calls take ${ANSWER_DELAY_MS} ms)`,
    `  inputs sent (turns started)     ${c.inputs}`,
    `  turns completed                 ${c.finished}`,
    `  turns failed / cancelled        ${c.failed} / ${c.cancelled}`,
    `  turns lost                      ${c.lost}`,
    `  inputs or turns duplicated      ${c.duplicated}`,
    `  event sequence gaps             ${c.gaps}`,
    `  turns stuck running/waiting     ${c.stuck}`,
    `  model calls completed           ${c.modelCalls}`,
    `  turns with two model outputs    ${c.outputsRecordedTwice}`,
    `  custom tool calls               ${c.toolCalls}`,
    `  turns with two tool calls       ${c.callsRecordedTwice}`,
    `  calls with two results          ${c.resultsRecordedTwice}`,
    `  results lost                    ${c.resultsLost}`,
    `  results submitted again, 409    ${c.resultsRefusedAfterLostAnswer} (the first submission's answer was lost to a kill)`,
    `  first submissions refused       ${c.resultsRefusedUnexpectedly}`,
    `  model calls repeated            ${c.repeatedModelCalls} (answers lost to a kill before being recorded; ` +
    `the longest from answer to kill: ${Math.round(c.longestAnswerToKillMs)} ms)`,
    `  repeated without a kill         ${c.repeatedWithoutKill}`,
    `  asked after being recorded      ${c.repeatedAfterRecorded}`,
    `  ${result.ok ? "every invariant holds" : "AN INVARIANT IS BROKEN"}`,
    ...c.details.map((detail) => `    ${detail}`)
  ].join("\n")
}
