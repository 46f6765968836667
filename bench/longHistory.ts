/**
 * A long-lived agent (docs/performance.md): does a turn's cost grow with the agent's past? Every
 * model call sends the whole conversation, so the bytes sent must grow; what the server does
 * besides should not. One agent on a fresh Postgres database runs HISTORY_TURNS turns one after
 * the other, each an input of INPUT_CHARS characters answered by a text of ANSWER_CHARS (the
 * scripted provider, at once), so the conversation grows by about 3 KB a turn. The rows: the
 * server's CPU per turn and the mean latency over the first WINDOW turns (after a warm-up) and
 * over the last WINDOW, with the size of the conversation the last call sent.
 */
import { Effect } from "effect"
import { Reply, startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import { createDatabase, newToken, startProcess, temporaryDataDir } from "./Harness.ts"
import { type RuntimeRow, singleAgent } from "./runtime.ts"

const TURNS = Number(process.env.HISTORY_TURNS ?? 400)
const WINDOW = 50
const WARM_UP_TURNS = 10
const INPUT_CHARS = 1_000
const ANSWER_CHARS = 2_000

/** Prose of `length` characters (varied, as a model's answer and a pasted input would be). */
const prose = (length: number, seed: number) => {
  const words = ["the", "file", "reads", "a", "value", "from", "its", "config", "and", "then", "writes", "\"quoted\"", "lines\n"]
  let text = ""
  for (let i = seed; text.length < length; i++) text += `${words[(i * 7) % words.length]} `
  return text.slice(0, length)
}

export const longHistory = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  const { close, provider } = await startScriptedProvider({ record: false })
  try {
    await Effect.runPromise(provider.answerByDefault(Reply.text(prose(ANSWER_CHARS, 1))))
    const database = await createDatabase()
    const dataDir = temporaryDataDir()
    const token = newToken()
    try {
      const server = await startProcess("src/main.ts", {
        DATA_DIR: dataDir.dir,
        AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
        DATABASE_URL: database.url
      })
      try {
        const agent = await singleAgent(server.baseUrl, token, provider.baseUrl("openai-responses"))
        let turnsRun = 0
        const turn = () => agent.turn(prose(INPUT_CHARS, turnsRun++))
        /** Runs `count` turns: the server's CPU per turn and their mean latency. */
        const window = async (count: number) => {
          const cpuBefore = server.cpuMilliseconds()
          const started = performance.now()
          for (let i = 0; i < count; i++) await turn()
          return { cpu: (server.cpuMilliseconds() - cpuBefore) / count, latency: (performance.now() - started) / count }
        }
        for (let i = 0; i < WARM_UP_TURNS; i++) await turn()
        const first = await window(WINDOW)
        const firstSize = turnsRun
        for (let i = 0; i < TURNS - 2 * WINDOW; i++) await turn()
        const last = await window(WINDOW)
        agent.stop()
        return [
          { name: `server CPU per turn, turns ${WARM_UP_TURNS + 1} to ${firstSize} (1 agent, Postgres)`, value: first.cpu, unit: "ms" },
          { name: `server CPU per turn, turns ${turnsRun - WINDOW + 1} to ${turnsRun}`, value: last.cpu, unit: "ms" },
          { name: `turn latency mean, turns ${WARM_UP_TURNS + 1} to ${firstSize}`, value: first.latency, unit: "ms" },
          { name: `turn latency mean, turns ${turnsRun - WINDOW + 1} to ${turnsRun}`, value: last.latency, unit: "ms" },
          { name: "text of the conversation the last call sent (about)", value: (turnsRun * (INPUT_CHARS + ANSWER_CHARS)) / 1024, unit: "KiB" }
        ]
      } finally {
        await server.stop()
      }
    } finally {
      dataDir.remove()
      await database.drop()
    }
  } finally {
    await close()
  }
}
