/**
 * A provider that echoes the API key in its error text (a 401 `Incorrect API key provided: <key>`,
 * an in-stream error) gets it redacted as `[redacted secret sec_…]` before anything is recorded:
 * the key is absent from the events, the SSE stream, the turn's error, the logs and every table.
 */
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, Redacted, References } from "effect"
import { randomBytes } from "node:crypto"
import { AppLive, ServicesLive } from "../../src/layers/AppLive.ts"
import { NodeTestServerLive } from "../../src/layers/http/NodeServer.ts"
import { openEventStream } from "../support/EventStreamClient.ts"
import { eventually } from "../support/Polling.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { testConfig } from "../support/TestApp.ts"
import { fastRetries } from "./RuntimeLayer.ts"

/** Every log line of the app, at every level, as the JSON logger writes it. */
const logLines: Array<string> = []
const CapturedLogs = Logger.layer([Logger.make((options) => {
  logLines.push(Logger.formatJson.log(options))
})])

const AppWithLogs = AppLive.pipe(
  Layer.provideMerge(ServicesLive),
  Layer.provideMerge(NodeTestServerLive),
  Layer.provide(testConfig()),
  Layer.provide(Layer.merge(CapturedLogs, Layer.succeed(References.MinimumLogLevel, "All")))
)

/** The tables (of this schema) holding `needle`, as text or as the hex of its bytes. */
const tablesHolding = (needle: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tables = yield* sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
    const hex = Buffer.from(needle).toString("hex")
    const holding: Array<string> = []
    for (const { table_name } of tables) {
      const [row] = yield* sql<{ found: number }>`
        SELECT count(*)::int AS found FROM ${sql(table_name)} AS r
        WHERE r::text LIKE ${`%${needle}%`} OR r::text LIKE ${`%${hex}%`}`
      if (row.found > 0) holding.push(table_name)
    }
    return { holding, checked: tables.length }
  }).pipe(Effect.orDie)

layer(Layer.mergeAll(AppWithLogs, ScriptedProvider.layer).pipe(Layer.provide(fastRetries)), {
  timeout: "90 seconds",
  excludeTestServices: true
})("provider key redaction", (it) => {
  it.effect("a 401 and an in-stream error echoing the key: redacted in events, stream, turn errors, logs and tables", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const key = `sk-live-${randomBytes(12).toString("hex")}`
      const secrets = yield* rt.client.secrets.list({ params: { orgID: rt.org.id }, query: {} })
      const secret = secrets.data.find((found) => found.name === "Provider key")!
      yield* rt.client.secrets.rotate({ params: { orgID: rt.org.id, secretID: secret.id }, payload: { value: Redacted.make(key) } })
      const marker = `[redacted secret ${secret.id}]`
      yield* provider.script([
        Reply.error(401, `Incorrect API key provided: ${key}. You can find your API key in your account.`),
        Reply.streamError([{ type: "text", text: "partial" }], `Key ${key} ("${key}") was refused`)
      ], { model: rt.slug })

      const agent = yield* rt.launch()
      const streamPath = `/v1/orgs/${rt.org.id}/projects/${rt.project.id}/agents/${agent.id}/events/stream`
      const stream = yield* openEventStream(streamPath, rt.owner.token)
      const first = yield* rt.send(agent.id, "one")
      const second = yield* rt.send(agent.id, "two")
      const failedTurns = (events: ReadonlyArray<{ event_kind: string; turn_status?: string }>) =>
        events.filter((event) => event.event_kind === "turn" && event.turn_status === "failed")
      yield* eventually(rt.events(agent.id), (events) => failedTurns(events).length === 2, "two failed turns", "30 seconds")
      yield* rt.idle(agent.id)

      // The provider did receive the key (the scripted provider checks it), and echoed it.
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      expect(requests[0].headers.authorization).toBe(`Bearer ${key}`)

      const events = yield* rt.events(agent.id)
      const failures = failedTurns(events) as unknown as ReadonlyArray<{ error: string }>
      expect(failures[0].error).toContain(`Incorrect API key provided: ${marker}`)
      expect(failures[0].error).toContain("401")
      expect(failures[1].error).toContain(`Key ${marker} ("${marker}") was refused`)
      expect(JSON.stringify(events)).not.toContain(key)

      for (const input of [first, second]) {
        const turn = yield* rt.client.agents.getTurn({ params: { ...rt.agentPath(agent.id), turnID: input.event.turn_id! } })
        expect(turn.status).toBe("failed")
        expect(JSON.stringify(turn)).toContain(marker)
        expect(JSON.stringify(turn)).not.toContain(key)
      }

      const frames = yield* stream.events(events.length)
      expect(frames.length).toBe(events.length)
      const streamed = JSON.stringify(stream.frames())
      expect(streamed).toContain(marker)
      expect(streamed).not.toContain(key)
      yield* stream.drop

      const { checked, holding } = yield* tablesHolding(key)
      expect(checked).toBeGreaterThan(20)
      expect(holding).toEqual([])
      // The scan does find what is there: the redaction marker in the events and the turns.
      expect((yield* tablesHolding(marker)).holding).toEqual(expect.arrayContaining(["agent_events", "turns"]))

      expect(logLines.length).toBeGreaterThan(0)
      expect(logLines.filter((line) => line.includes(key))).toEqual([])
    }))
})
