/**
 * This server beside the agent servers people would pick instead, on the same workload: N
 * conversations (1, 10, 100), each sending a message and, once the answer is stored, the next,
 * for BENCH_DURATION_SECONDS each; one scripted OpenAI-compatible model server in this process
 * answering every call at once (this server calls it over the Responses API, as in the runtime
 * bench; the others over Chat Completions, what their OpenAI-compatible clients speak); turns a
 * second, p50 and p99, and each server's CPU a turn (its process and the processes it starts),
 * and this process's (the clients and the model server, which share the machine's cores with the
 * server under measurement). After 3 s of unmeasured turns with one conversation, so that each
 * server's JIT is warm.
 *
 * - this server, on the embedded PGlite and on a fresh Postgres database (a conversation is an
 *   agent: POST an input, its turn's `completed` event read from the agent's event stream);
 * - each competitor of bench/competitors/ (a `Competitor`), run as its users deploy it: Mastra's
 *   Agent with Memory on a LibSQL file behind Mastra's Hono server, and the LangGraph.js Agent
 *   Server (`langgraph dev`, in memory). After each run, a few of its conversations are read back:
 *   every turn must have stored the user's message and the answer.
 *
 * The servers take turns for BENCH_COMPETITOR_ROUNDS rounds (default 3); each figure is the median
 * of the rounds. Not in the default run (`npm run bench -- competitors`): the competitors' packages
 * are installed into their directories on first use, from the npm registry (their own
 * package-lock.json files).
 */
import { join } from "node:path"
import { Effect } from "effect"
import { Reply, startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import type { Competitor } from "./competitors/Competitor.ts"
import { langgraph } from "./competitors/langgraph.ts"
import { mastra } from "./competitors/mastra.ts"
import {
  createDatabase,
  installPackagesOnce,
  ownCpuMilliseconds,
  postgresCpuMilliseconds,
  type Process,
  ROOT,
  startServer,
  temporaryDataDir
} from "./Harness.ts"
import {
  agentTurn,
  driveTurns,
  followTurns,
  median,
  request,
  type RuntimeRow,
  turnRows,
  withProjectServer
} from "./runtime.ts"

const COMPETITORS: ReadonlyArray<Competitor> = [mastra, langgraph]
const ROUNDS = Number(process.env.BENCH_COMPETITOR_ROUNDS ?? 3)
const CONCURRENCY = [1, 10, 100] as const
const WARM_UP_SECONDS = 3
/** Conversations of each run read back to check that every turn was stored. */
const CHECKED_CONVERSATIONS = 3

/** The conversations of one run: a turn function for each. */
type Conversations = ReadonlyArray<() => Promise<void>>

/** A server under measurement: its process, and how to open `count` new conversations on it. */
interface Measured {
  readonly process: Process
  readonly open: (count: number) => Promise<{ readonly conversations: Conversations; readonly close: () => Promise<void> }>
  /** Whether the CPU of the machine's Postgres is the server's too (this server on Postgres). */
  readonly onPostgres: boolean
}

const label = (conversations: number, system: string) =>
  `${conversations} conversation${conversations === 1 ? "" : "s"}, ${system}`

/** The warm-up, then a run at each concurrency: the rows of `system`. */
const measureSystem = async (system: string, measured: Measured): Promise<Array<RuntimeRow>> => {
  const warmUp = await measured.open(1)
  await driveTurns(warmUp.conversations, WARM_UP_SECONDS)
  await warmUp.close()
  const rows: Array<RuntimeRow> = []
  for (const count of CONCURRENCY) {
    const { close, conversations } = await measured.open(count)
    const cpuBefore = measured.process.cpuMilliseconds()
    const ownCpuBefore = ownCpuMilliseconds()
    const postgresCpuBefore = measured.onPostgres ? postgresCpuMilliseconds() : undefined
    const { elapsed, latencies } = await driveTurns(conversations)
    const turns = Math.max(latencies.length, 1)
    const cpu = (measured.process.cpuMilliseconds() - cpuBefore) / turns
    const ownCpu = ownCpuMilliseconds() - ownCpuBefore
    const postgresCpuAfter = postgresCpuBefore === undefined ? undefined : postgresCpuMilliseconds()
    await close()
    rows.push(...turnRows(label(count, system), latencies, elapsed))
    rows.push({ name: `server CPU per turn, ${label(count, system)}`, value: cpu, unit: "ms" })
    rows.push({
      name: `client and model server CPU per turn, ${label(count, system)}`,
      value: ownCpu / turns,
      unit: "ms"
    })
    if (postgresCpuBefore !== undefined && postgresCpuAfter !== undefined) {
      rows.push({ name: `Postgres CPU per turn, ${label(count, system)}`, value: (postgresCpuAfter - postgresCpuBefore) / turns, unit: "ms" })
    }
  }
  return rows
}

/** This server on one database (`env` says which), its conversations agents of one project. */
const thisServer = (system: string, env: Record<string, string>, providerUrl: string): Promise<Array<RuntimeRow>> =>
  withProjectServer(env, providerUrl, ({ configId, projectUrl, server, token }) =>
    measureSystem(system, {
      process: server,
      onPostgres: env.DATABASE_URL !== undefined,
      open: async (count) => {
        const abort = new AbortController()
        const conversations = await Promise.all(Array.from({ length: count }, async () => {
          const agent = await request("POST", `${projectUrl}/agents`, token, { agent_config_id: configId })
          const agentUrl = `${projectUrl}/agents/${agent.id}`
          const turnEnded = await followTurns(agentUrl, token, abort.signal)
          return agentTurn({ inputsUrl: () => `${agentUrl}/inputs`, turnEnded }, token)
        }))
        return { conversations, close: async () => abort.abort() }
      }
    }))

/**
 * A competitor's server, run with plain `node` as its users would (without this server's V8
 * flag), its conversations checked after each run: each turn stored two messages.
 */
const competitorServer = async (competitor: Competitor, providerUrl: string): Promise<Array<RuntimeRow>> => {
  installPackagesOnce(competitor.directory)
  const dataDir = temporaryDataDir()
  try {
    const { DATABASE_URL: _, AGENT_PLATFORM_BOOTSTRAP_TOKEN: __, ...inherited } = process.env
    const server = await startServer({
      args: [join(ROOT, competitor.entry)],
      cwd: join(ROOT, competitor.directory),
      env: (port) => ({
        ...inherited,
        NODE_ENV: "production",
        PORT: String(port),
        MODEL_BASE_URL: providerUrl,
        MODEL_API_KEY: "sk-bench",
        DATA_DIR: dataDir.dir
      }),
      readyPath: competitor.readyPath,
      countDescendants: true
    })
    try {
      return await measureSystem(competitor.name, {
        process: server,
        onPostgres: false,
        open: async (count) => {
          const ids = await Promise.all(Array.from({ length: count }, () => competitor.newConversation(server.baseUrl)))
          const turnsRun = ids.map(() => 0)
          const conversations = ids.map((id, index) => async () => {
            await competitor.turn(server.baseUrl, id, "hi")
            turnsRun[index]++
          })
          const close = async () => {
            for (const [index, id] of ids.slice(0, CHECKED_CONVERSATIONS).entries()) {
              const stored = await competitor.storedMessages(server.baseUrl, id)
              if (stored !== 2 * turnsRun[index]) {
                throw new Error(`${competitor.name}: conversation ${id} ran ${turnsRun[index]} turns and stored ${stored} messages`)
              }
            }
          }
          return { conversations, close }
        }
      })
    } finally {
      await server.stop()
    }
  } finally {
    dataDir.remove()
  }
}

/** The rows of each round as one, each figure the median of the rounds'. */
const medianRows = (rounds: ReadonlyArray<ReadonlyArray<RuntimeRow>>): Array<RuntimeRow> =>
  rounds[0].map((row) => ({ ...row, value: median(rounds.map((rows) => rows.find((other) => other.name === row.name)?.value ?? 0)) }))

export const competitors = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  const { close, provider } = await startScriptedProvider({ record: false })
  try {
    await Effect.runPromise(provider.answerByDefault(Reply.text("ok")))
    const responsesUrl = provider.baseUrl("openai-responses")
    const postgresReachable = await createDatabase().then((database) => database.drop().then(() => true), () => false)
    const systems: ReadonlyArray<{ readonly name: string; readonly run: () => Promise<Array<RuntimeRow>> }> = [
      { name: "this server, PGlite", run: () => thisServer("this server, PGlite", {}, responsesUrl) },
      ...(postgresReachable
        ? [{
          name: "this server, Postgres",
          run: async () => {
            const database = await createDatabase()
            try {
              return await thisServer("this server, Postgres", { DATABASE_URL: database.url }, responsesUrl)
            } finally {
              await database.drop()
            }
          }
        }]
        : []),
      ...COMPETITORS.map((competitor) => ({
        name: competitor.name,
        run: () => competitorServer(competitor, provider.baseUrl("openai-chat-completions"))
      }))
    ]
    const rounds = new Map(systems.map((system) => [system.name, [] as Array<Array<RuntimeRow>>]))
    for (let round = 0; round < ROUNDS; round++) {
      // Every other round in the reverse order, so that no server always runs first on a fresh machine.
      for (const system of round % 2 === 0 ? systems : [...systems].reverse()) rounds.get(system.name)!.push(await system.run())
    }
    return systems.flatMap((system) => medianRows(rounds.get(system.name)!))
  } finally {
    await close()
  }
}
