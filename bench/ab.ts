/**
 * `BENCH_AB_BASE=<revision> npm run bench -- ab`: this checkout's server against another
 * revision's on the same workload, in alternate rounds. On a shared machine the speed drifts by
 * more than a change's effect within minutes (docs/performance.md), so the two builds are measured
 * turn about, and the medians compared. The base revision is checked out with `git worktree` into
 * a temporary directory and installed there with `npm ci` (its own lock file and patches), then
 * removed. Each round starts each build's server on a fresh Postgres database (`AB_DATABASE=embedded`:
 * a fresh embedded database in a new data directory instead) and drives AB_AGENTS agents (100) for
 * WARM_UP_SECONDS, then BENCH_DURATION_SECONDS measured: turns a second, p50 and p99, the server's
 * CPU a turn and, on Postgres, the Postgres processes' CPU a turn. AB_ROUNDS (5) rounds.
 * `AB_WORKLOAD=appends`: the appends' workload instead (bench/appends.ts: its 200 agents, whatever
 * AB_AGENTS says, each in a held turn, their clients queueing inputs), measured by events appended
 * a second and the CPU an event. `AB_WORKLOAD=tool-calls`: the turns' workload where each turn
 * calls the agent's custom tool once, its client answering the call as its event arrives, and the
 * model answers after the result.
 * `AB_POSTGRES_RELAY=1`: each server reaches Postgres through a TCP relay in this process, so each
 * statement's round trip takes a little longer, as with a Postgres on another machine (the lock
 * session's queue showed only so: docs/performance-record.md, "The lock session's queue").
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { type DefaultReply, Reply, startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import { AGENTS as APPENDING_AGENTS, appendRound } from "./appends.ts"
import { createDatabase, postgresCpuMilliseconds, ROOT, startPostgresRelay } from "./Harness.ts"
import {
  agentTurn,
  answerToolCall,
  type BenchConfig,
  driveTurns,
  followTurns,
  median,
  percentile,
  type ProjectServer,
  request,
  type RuntimeRow,
  toolCallThenAnswer,
  withProjectServer
} from "./runtime.ts"

const TURNING_AGENTS = Number(process.env.AB_AGENTS ?? 100)
const ROUNDS = Number(process.env.AB_ROUNDS ?? 5)
const WARM_UP_SECONDS = 3
const DATABASE = process.env.AB_DATABASE ?? "postgres"
if (DATABASE !== "postgres" && DATABASE !== "embedded") throw new Error("AB_DATABASE is postgres (the default) or embedded")
const RELAYED = process.env.AB_POSTGRES_RELAY === "1"
if (RELAYED && DATABASE !== "postgres") throw new Error("AB_POSTGRES_RELAY applies to Postgres only")
const DATABASE_LABEL = DATABASE === "postgres" ? RELAYED ? "Postgres through a relay" : "Postgres" : "PGlite"

/** Runs `use` with the environment of a server on a fresh database of the kind AB_DATABASE names. */
const withFreshDatabase = async <A>(use: (env: Record<string, string>) => Promise<A>): Promise<A> => {
  // The embedded database lives in the server's data directory, which withProjectServer makes new.
  if (DATABASE === "embedded") return use({})
  const database = await createDatabase()
  const relay = RELAYED ? await startPostgresRelay(database.url) : undefined
  try {
    return await use({ DATABASE_URL: relay?.url ?? database.url })
  } finally {
    await relay?.close()
    await database.drop()
  }
}

interface RoundFigures {
  /** Turns, or appended events, a second. */
  readonly perSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** The server's CPU a turn, or an appended event. */
  readonly serverCpuMs: number
  /** Undefined on the embedded database, and when Postgres runs on another machine (its CPU is not this machine's to read). */
  readonly postgresCpuMs: number | undefined
}

/**
 * TURNING_AGENTS agents, each sending an input and waiting for its turn to end, over and over;
 * with `answerToolCalls`, each also answers its custom tool's calls as they come.
 */
const turnsRound = (answerToolCalls: boolean) => async ({ configId, projectUrl, server, token }: ProjectServer): Promise<RoundFigures> => {
  const abort = new AbortController()
  try {
    const driven = await Promise.all(Array.from({ length: TURNING_AGENTS }, async () => {
      const agent = await request("POST", `${projectUrl}/agents`, token, { agent_config_id: configId })
      const agentUrl = `${projectUrl}/agents/${agent.id}`
      const turnEnded = await followTurns(agentUrl, token, abort.signal, answerToolCalls ? answerToolCall(agentUrl, token) : undefined)
      return agentTurn({ inputsUrl: () => `${agentUrl}/inputs`, turnEnded }, token)
    }))
    await driveTurns(driven, WARM_UP_SECONDS)
    const serverBefore = server.cpuMilliseconds()
    const postgresBefore = DATABASE === "postgres" ? postgresCpuMilliseconds() : undefined
    const { elapsed, latencies } = await driveTurns(driven)
    const turns = Math.max(latencies.length, 1)
    const postgresAfter = postgresBefore === undefined ? undefined : postgresCpuMilliseconds()
    return {
      perSecond: latencies.length / elapsed,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      serverCpuMs: (server.cpuMilliseconds() - serverBefore) / turns,
      postgresCpuMs: postgresBefore === undefined || postgresAfter === undefined ? undefined : (postgresAfter - postgresBefore) / turns
    }
  } finally {
    abort.abort()
  }
}

/** What a round measures: the model's reply, what is counted, and how a round runs on a started server. */
interface Workload {
  readonly reply: DefaultReply
  /** What the agents' config lists besides its model. */
  readonly config: BenchConfig
  readonly agents: number
  /** What a round counts (a turn, an appended event) and what its latency is of. */
  readonly counted: string
  readonly latency: string
  readonly round: (started: ProjectServer) => Promise<RoundFigures>
}

const WORKLOADS: Record<"turns" | "tool-calls" | "appends", Workload> = {
  turns: { reply: Reply.text("ok"), config: {}, agents: TURNING_AGENTS, counted: "turn", latency: "turn latency", round: turnsRound(false) },
  "tool-calls": {
    reply: toolCallThenAnswer,
    config: { customTool: true },
    agents: TURNING_AGENTS,
    counted: "tool-call turn",
    latency: "turn latency",
    round: turnsRound(true)
  },
  appends: {
    reply: Reply.hang(),
    config: {},
    agents: APPENDING_AGENTS,
    counted: "appended event",
    latency: "input request",
    round: async ({ configId, projectUrl, server, token }) => {
      const { eventsPerSecond, p50Ms, p99Ms, postgresCpuMs, serverCpuMs } = await appendRound(
        server,
        projectUrl,
        configId,
        token,
        DATABASE === "postgres"
      )
      return { perSecond: eventsPerSecond, p50Ms, p99Ms, serverCpuMs, postgresCpuMs }
    }
  }
}
const WORKLOAD_NAME = process.env.AB_WORKLOAD ?? "turns"
if (!Object.hasOwn(WORKLOADS, WORKLOAD_NAME)) throw new Error("AB_WORKLOAD is turns (the default), tool-calls or appends")
const WORKLOAD = WORKLOADS[WORKLOAD_NAME as keyof typeof WORKLOADS]

/** One round of one build: a fresh database, its server, the workload's round. */
const measureRound = (root: string, providerUrl: string): Promise<RoundFigures> =>
  withFreshDatabase((env) => withProjectServer(env, providerUrl, WORKLOAD.round, root, WORKLOAD.config))

const describeRound = (figures: RoundFigures) =>
  `${figures.perSecond.toFixed(0)} ${WORKLOAD.counted}s/s, p50 ${figures.p50Ms.toFixed(0)} ms, p99 ${figures.p99Ms.toFixed(0)} ms, ` +
  `server CPU ${figures.serverCpuMs.toFixed(3)} ms` +
  (figures.postgresCpuMs === undefined ? "" : `, Postgres CPU ${figures.postgresCpuMs.toFixed(3)} ms`) + ` per ${WORKLOAD.counted}`

/** The medians of a build's rounds as rows, `label` naming the build. */
const medianRows = (label: string, rounds: ReadonlyArray<RoundFigures>): Array<RuntimeRow> => {
  const of = (pick: (figures: RoundFigures) => number) => median(rounds.map(pick))
  const { agents, counted, latency } = WORKLOAD
  const where = `${agents} agent${agents === 1 ? "" : "s"}, ${DATABASE_LABEL}, ${label}, median of ${rounds.length}`
  const postgresCpu = rounds.flatMap((figures) => figures.postgresCpuMs === undefined ? [] : [figures.postgresCpuMs])
  return [
    { name: `${counted}s per second, ${where}`, value: of((figures) => figures.perSecond), unit: `${counted}s/s` },
    { name: `${latency} p50, ${where}`, value: of((figures) => figures.p50Ms), unit: "ms" },
    { name: `${latency} p99, ${where}`, value: of((figures) => figures.p99Ms), unit: "ms" },
    { name: `server CPU per ${counted}, ${where}`, value: of((figures) => figures.serverCpuMs), unit: "ms" },
    ...(postgresCpu.length === 0 ? [] : [{ name: `Postgres CPU per ${counted}, ${where}`, value: median(postgresCpu), unit: "ms" }])
  ]
}

/** The base revision checked out and installed in a temporary directory for the run of `use`. */
const withBaseCheckout = async <A>(revision: string, use: (root: string) => Promise<A>): Promise<A> => {
  const root = join(mkdtempSync(join(tmpdir(), "agent-platform-ab-")), "base")
  execFileSync("git", ["worktree", "add", "--detach", root, revision], { cwd: ROOT, stdio: "inherit" })
  try {
    execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: root, stdio: "inherit" })
    return await use(root)
  } finally {
    execFileSync("git", ["worktree", "remove", "--force", root], { cwd: ROOT, stdio: "inherit" })
    rmSync(join(root, ".."), { recursive: true, force: true })
  }
}

export const ab = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  const base = process.env.BENCH_AB_BASE
  if (base === undefined) throw new Error("BENCH_AB_BASE names the revision to compare this checkout with (for example HEAD~1)")
  const revision = execFileSync("git", ["rev-parse", "--short", base], { cwd: ROOT, encoding: "utf8" }).trim()
  return withBaseCheckout(revision, async (baseRoot) => {
    const { close, provider } = await startScriptedProvider({ record: false })
    try {
      await Effect.runPromise(provider.answerByDefault(WORKLOAD.reply))
      const providerUrl = provider.baseUrl("openai-responses")
      const builds = [{ label: `base ${revision}`, root: baseRoot }, { label: "this checkout", root: ROOT }]
      const rounds = builds.map(() => [] as Array<RoundFigures>)
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [index, build] of builds.entries()) {
          const figures = await measureRound(build.root, providerUrl)
          rounds[index].push(figures)
          console.log(`round ${round}, ${build.label}: ${describeRound(figures)}`)
        }
      }
      return builds.flatMap((build, index) => medianRows(build.label, rounds[index]))
    } finally {
      await close()
    }
  })
}
