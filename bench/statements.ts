/**
 * SQL statements per turn (docs/performance.md): the server as a child process on a fresh Postgres
 * database, reached through a relay in this process (`startPostgresRelay`) that reads the Postgres
 * wire protocol the server sends and counts each statement it runs (a simple `Query`, or an
 * `Execute` of the extended protocol, named by the text of the statement its portal was bound
 * to). One agent runs
 * STATEMENT_TURNS turns one after the other (after a warm-up of WARM_UP_TURNS turns, and at least
 * until a process newly listening for the others stops counting them as there: ANSWER_GRACE after
 * its hello, with a second to spare); the rows are the statements per
 * turn, in total and by text (the most frequent first), and the server's CPU time per turn.
 * STATEMENT_SKILLS (0) project skills listed in the agent's config show what its skills cost a turn;
 * STATEMENT_TOOL_CALLS=n makes each turn n model calls that each ask for a custom tool, each
 * tool's result (posted by this process as the call's event arrives), and a last model call.
 *
 * The count includes everything the server sent meanwhile: the workflow engine's own tables and
 * its background polling (a few statements a second, whatever the turns do), so it is measured
 * over a known number of turns run back to back.
 */
import { Duration, Effect } from "effect"
import { ANSWER_GRACE } from "../src/services/runtime/EventNotifications.ts"
import { Reply, startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import { createDatabase, newToken, startPostgresRelay, startProcess, temporaryDataDir } from "./Harness.ts"
import { BENCH_TOOL, type RuntimeRow, singleAgent } from "./runtime.ts"

const TURNS = Number(process.env.STATEMENT_TURNS ?? 100)
const WARM_UP_TURNS = 10
/** Project skills the agent's config lists (each read at every model call). */
const SKILLS = Number(process.env.STATEMENT_SKILLS ?? 0)
/** The model calls of each turn that call a custom tool, one each, before the call that answers. */
const TOOL_CALLS = Number(process.env.STATEMENT_TOOL_CALLS ?? 0)
/** Statements listed by text. */
const TOP = Number(process.env.STATEMENT_TOP ?? 40)

const SSL_REQUEST = 80877103
const GSS_REQUEST = 80877104

/** Counts of the statements seen, by normalized text, and of those that insert tool calls. */
class StatementCounter {
  readonly counts = new Map<string, number>()
  total = 0
  toolCallInserts = 0
  add(text: string) {
    const key = text.replace(/\s+/g, " ").trim().slice(0, 140)
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
    this.total++
    // A call's row is inserted by a statement of its own or by the one that appends its event.
    if (/INSERT INTO "?tool_calls"?/.test(text)) this.toolCallInserts++
  }
  reset() {
    this.counts.clear()
    this.total = 0
    this.toolCallInserts = 0
  }
}

/** Reads the frontend messages of one connection: its statements go to `counter`. */
const frontendReader = (counter: StatementCounter) => {
  let buffer = Buffer.alloc(0)
  let startup = true
  const statements = new Map<string, string>()
  const portals = new Map<string, string>()
  const cString = (data: Buffer, offset: number) => {
    const end = data.indexOf(0, offset)
    return { value: data.toString("utf8", offset, end), next: end + 1 }
  }
  return (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk])
    for (;;) {
      if (startup) {
        if (buffer.length < 8) return
        const length = buffer.readInt32BE(0)
        if (buffer.length < length) return
        const code = buffer.readInt32BE(4)
        buffer = buffer.subarray(length)
        if (code !== SSL_REQUEST && code !== GSS_REQUEST) startup = false
        continue
      }
      if (buffer.length < 5) return
      const type = String.fromCharCode(buffer[0])
      const length = buffer.readInt32BE(1)
      if (buffer.length < length + 1) return
      const body = buffer.subarray(5, length + 1)
      buffer = buffer.subarray(length + 1)
      switch (type) {
        case "Q":
          counter.add(cString(body, 0).value)
          break
        case "P": {
          const name = cString(body, 0)
          statements.set(name.value, cString(body, name.next).value)
          break
        }
        case "B": {
          const portal = cString(body, 0)
          const statement = cString(body, portal.next)
          portals.set(portal.value, statements.get(statement.value) ?? "?")
          break
        }
        case "E":
          counter.add(portals.get(cString(body, 0).value) ?? "?")
          break
      }
    }
  }
}

/** Statements per turn on Postgres, in total and by text, and the server's CPU time per turn. */
export const statements = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  const { close, provider } = await startScriptedProvider({ record: false })
  const counter = new StatementCounter()
  try {
    await Effect.runPromise(provider.answerByDefault(Reply.text("ok")))
    if (TOOL_CALLS > 0) {
      // Tool calls then an answer, turn after turn: enough for the warm-up (a few hundred turns at most) and the run.
      const turn = [...Array.from({ length: TOOL_CALLS }, () => Reply.toolCall(BENCH_TOOL, {})), Reply.text("ok")]
      await Effect.runPromise(provider.script(Array.from({ length: TURNS + 2_000 }, () => turn).flat()))
    }
    const database = await createDatabase()
    const relay = await startPostgresRelay(database.url, () => frontendReader(counter))
    const dataDir = temporaryDataDir()
    try {
      const token = newToken()
      const server = await startProcess("src/main.ts", {
        DATA_DIR: dataDir.dir,
        AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
        DATABASE_URL: relay.url
      })
      try {
        const agent = await singleAgent(server.baseUrl, token, provider.baseUrl("openai-responses"), { skills: SKILLS, customTool: TOOL_CALLS > 0 })
        const turn = () => agent.turn("hi")
        const warmUntil = Date.now() + Duration.toMillis(ANSWER_GRACE) + 1_000
        for (let i = 0; i < WARM_UP_TURNS || Date.now() < warmUntil; i++) await turn()
        counter.reset()
        const cpuBefore = server.cpuMilliseconds()
        const started = performance.now()
        for (let i = 0; i < TURNS; i++) await turn()
        const elapsed = performance.now() - started
        const cpu = server.cpuMilliseconds() - cpuBefore
        const total = counter.total
        const byText = [...counter.counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP)
        agent.stop()
        const toolCalls = counter.toolCallInserts
        if (toolCalls !== TOOL_CALLS * TURNS) throw new Error(`the turns made ${toolCalls} tool calls, not ${TOOL_CALLS * TURNS}`)
        const agentLabel = [
          "1 agent",
          ...(SKILLS === 0 ? [] : [`${SKILLS} skills`]),
          ...(TOOL_CALLS === 0 ? [] : [TOOL_CALLS === 1 ? "a tool call a turn" : `${TOOL_CALLS} tool calls a turn`])
        ].join(", ")
        return [
          { name: `SQL statements per turn (${agentLabel}, ${TURNS} turns, Postgres)`, value: total / TURNS, unit: "statements" },
          { name: `server CPU per turn (${agentLabel}, Postgres)`, value: cpu / TURNS, unit: "ms" },
          { name: `turn latency mean (${agentLabel}, Postgres)`, value: elapsed / TURNS, unit: "ms" },
          ...byText.map(([text, count]) => ({ name: `  ${text}`, value: count / TURNS, unit: "per turn" }))
        ]
      } finally {
        await server.stop()
      }
    } finally {
      dataDir.remove()
      await relay.close()
      await database.drop()
    }
  } finally {
    await close()
  }
}
