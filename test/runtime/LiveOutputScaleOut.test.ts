/**
 * Live output across processes (Postgres only): two server processes on one database, a stream
 * of each agent open on both; whichever process runs a turn, both streams get its text deltas
 * (no `id:`) before the stored model_output (LiveOutput through EventNotifications' pg_notify);
 * an answer too long for one notification arrives whole, in order. A process alone on its
 * database sends neither wake-ups nor live output until another process says hello, which it
 * answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import type { Client } from "../../src/api/Client.ts"
import type { OutputDelta } from "../../src/domain/runtime/OutputDeltas.ts"
import { ANSWER_GRACE, CHANNEL } from "../../src/services/runtime/EventNotifications.ts"
import { waitForShards } from "../support/ClusterShards.ts"
import { type OpenStream, openEventStreamAt } from "../support/EventStreamClient.ts"
import { contiguousOffsets } from "../support/OutputDeltas.ts"
import { eventually, until } from "../support/Polling.ts"
import {
  killLeftoverServers,
  makeDataDir,
  makeTemplateDataDir,
  removeDataDir,
  type ServerProcess,
  startServer,
  usesEmbeddedDatabase,
  withClient
} from "../support/Processes.ts"
import { scriptedProject } from "../support/ScriptedModel.ts"
import { Reply, type ScriptedProviderShape, startScriptedProvider } from "../support/ScriptedProvider.ts"
import { uniqueEmail } from "../support/TestApp.ts"

const TIMEOUT_MS = 180_000
const AGENTS = 4
const ANSWER = "one two three four five six seven eight"
/** Over 12,000 characters streamed at once: one 50 ms batch, cut into notifications under 8000 bytes. */
/** The secret key of every process of this file: they share one database. */
const SECRET_KEY = randomBytes(32).toString("base64")
const LONG = Array.from({ length: 1500 }, (_, index) => `wörd${index}😀\u0007`).join(" ")

describe.skipIf(usesEmbeddedDatabase)("live output across processes (Postgres only: set DATABASE_URL)", () => {
  const dataDirs: Array<string> = []
  let provider: ScriptedProviderShape
  let closeProvider: () => Promise<void>

  beforeAll(async () => {
    dataDirs.push(await makeTemplateDataDir())
    const started = await startScriptedProvider()
    provider = started.provider
    closeProvider = started.close
  }, TIMEOUT_MS)

  afterAll(async () => {
    killLeftoverServers()
    dataDirs.forEach(removeDataDir)
    await closeProvider?.()
  })

  it("both processes' streams get every turn's deltas before its model_output", async () => {
    const token = `live-${randomBytes(16).toString("hex")}`
    const env = {
      AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
      AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("live"),
      AGENT_PLATFORM_SECRET_KEY: SECRET_KEY
    }
    const slug = `live-${randomBytes(4).toString("hex")}`
    await Effect.runPromise(provider.script(Array.from({ length: AGENTS }, () => Reply.slowText(ANSWER, 40)), { model: slug }))
    const servers: Array<ServerProcess> = await Promise.all([0, 1].map(() => {
      const dataDir = makeDataDir(dataDirs[0])
      dataDirs.push(dataDir)
      return startServer(dataDir, env)
    }))
    const on = <A, E>(index: number, f: (client: Client) => Effect.Effect<A, E>) => withClient(servers[index].baseUrl, token, f)
    const streams: Array<OpenStream> = []
    try {
      await waitForShards(process.env.DATABASE_URL!, 2)
      const setup = await on(0, (client) =>
        scriptedProject(client, { name: "Live", label: "live", baseUrl: provider.baseUrl("openai-responses"), slug }))
      const agents = await Promise.all(Array.from({ length: AGENTS }, (_, index) =>
        on(index % 2, (client) => client.agents.create({ params: setup.projectPath, payload: { agent_config_id: setup.configId } }))))
      const streamsOf = await Promise.all(agents.map(async (agent) => {
        const path = `/v1/orgs/${setup.projectPath.orgID}/projects/${setup.projectPath.projectID}/agents/${agent.id}/events/stream`
        const pair = await Promise.all(servers.map((server) => Effect.runPromise(openEventStreamAt(server.port, path, token))))
        streams.push(...pair)
        return pair
      }))
      await Promise.all(agents.map((agent, index) =>
        on(index % 2, (client) =>
          client.agents.sendInput({
            params: { ...setup.projectPath, agentID: agent.id },
            payload: { content_blocks: [{ type: "text", text: `Go ${index}` }] }
          }))))
      for (const pair of streamsOf) {
        for (const stream of pair) {
          const frames = await Effect.runPromise(eventually(
            Effect.sync(() => stream.frames()),
            (all) => all.some((frame) => frame.event === "model_output"),
            "the model_output frame",
            "60 seconds"
          ))
          const outputAt = frames.findIndex((frame) => frame.event === "model_output")
          const deltas = frames.slice(0, outputAt).filter((frame) => frame.event === "text_delta")
          expect(deltas.length).toBeGreaterThanOrEqual(2)
          expect(deltas.every((frame) => frame.id === undefined)).toBe(true)
          const decoded = deltas.map((frame) => JSON.parse(frame.data!) as OutputDelta)
          expect(decoded.map((delta) => delta.delta).join("")).toBe(ANSWER)
          expect(decoded.map((delta) => delta.offset)).toEqual(contiguousOffsets(decoded))
        }
      }

      // A long answer, all at once, to the first agent: both streams get all of it, in order.
      await Effect.runPromise(provider.script([Reply.answer([{ type: "text", text: LONG }])], { model: slug }))
      await on(1, (client) =>
        client.agents.sendInput({
          params: { ...setup.projectPath, agentID: agents[0].id },
          payload: { content_blocks: [{ type: "text", text: "At length" }] }
        }))
      for (const stream of streamsOf[0]) {
        const frames = await Effect.runPromise(eventually(
          Effect.sync(() => stream.frames()),
          (all) => all.filter((frame) => frame.event === "model_output").length === 2,
          "the second model_output frame",
          "60 seconds"
        ))
        const first = frames.findIndex((frame) => frame.event === "model_output")
        const second = frames.findLastIndex((frame) => frame.event === "model_output")
        const deltas = frames.slice(first + 1, second).filter((frame) => frame.event === "text_delta")
        expect(deltas.length).toBeGreaterThanOrEqual(2)
        const decoded = deltas.map((frame) => JSON.parse(frame.data!) as OutputDelta)
        expect(decoded.map((delta) => delta.delta).join("")).toBe(LONG)
        // Cut into pieces for the notifications (at most 1000 code points each), each at its own offset.
        expect(decoded.map((delta) => delta.offset)).toEqual(contiguousOffsets(decoded))
      }
    } finally {
      await Promise.all(streams.map((stream) => Effect.runPromise(stream.drop)))
      await Promise.all(servers.map((server) => server.stop()))
    }
  }, TIMEOUT_MS)

  it("a process alone sends neither wake-ups nor live output; another's hello is answered, and both follow", async () => {
    const token = `alone-${randomBytes(16).toString("hex")}`
    const slug = `alone-${randomBytes(4).toString("hex")}`
    await Effect.runPromise(provider.script([Reply.text(ANSWER), Reply.text(LONG)], { model: slug }))
    // The test listens as another process would, without saying it is there.
    const listener = new pg.Client({ connectionString: process.env.DATABASE_URL })
    await listener.connect()
    const heard: Array<{ readonly at: number; readonly payload: string }> = []
    listener.on("notification", (message) => heard.push({ at: Date.now(), payload: message.payload ?? "" }))
    await listener.query(`LISTEN ${CHANNEL}`)
    const fromServer = (rest: (value: string) => boolean) => (entry: { readonly payload: string }) => {
      const separator = entry.payload.indexOf(" ")
      return entry.payload.slice(0, separator) !== "peer" && rest(entry.payload.slice(separator + 1))
    }
    const isOutput = fromServer((rest) => rest.startsWith("{"))
    const isWakeUp = fromServer((rest) => /^agt_\S+ \d+$/.test(rest))
    const dataDir = makeDataDir(dataDirs[0])
    dataDirs.push(dataDir)
    let server: ServerProcess | undefined
    try {
      server = await startServer(dataDir, {
        AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
        AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("alone"),
        AGENT_PLATFORM_SECRET_KEY: SECRET_KEY
      })
      const baseUrl = server.baseUrl
      const on = <A, E>(f: (client: Client) => Effect.Effect<A, E>) => withClient(baseUrl, token, f)
      const agentPath = await on((client) =>
        Effect.gen(function*() {
          const { configId, projectPath } = yield* scriptedProject(client, { name: "Alone", label: "alone", baseUrl: provider.baseUrl("openai-responses"), slug })
          const agent = yield* client.agents.create({ params: projectPath, payload: { agent_config_id: configId } })
          return { ...projectPath, agentID: agent.id }
        }))
      const runTurn = async (text: string, turns: number) => {
        await on((client) => client.agents.sendInput({ params: agentPath, payload: { content_blocks: [{ type: "text", text }] } }))
        await until(
          () => on((client) => client.agents.listTurns({ params: agentPath, query: {} })),
          (page) => page.data.length === turns && page.data.every((turn) => turn.status === "completed"),
          `turn ${turns} completed`
        )
      }

      // The server's hello came; once its grace for answers is over, it counts itself alone.
      await until(async () => heard.filter(fromServer((rest) => rest === "?")), (hellos) => hellos.length === 1, "the server's hello")
      await new Promise((resolve) => setTimeout(resolve, Duration.toMillis(ANSWER_GRACE) + 500))
      await runTurn("Alone", 1)
      expect(heard.filter(isWakeUp)).toEqual([])
      expect(heard.filter(isOutput)).toEqual([])

      // Another process says hello: the server answers with a heartbeat and sends both again.
      const helloAt = Date.now()
      await listener.query(`SELECT pg_notify('${CHANNEL}', 'peer ?')`)
      await until(
        async () => heard.filter((entry) => entry.at >= helloAt).filter(fromServer((rest) => rest === "")),
        (answers) => answers.length >= 1,
        "the server's answer to the hello",
        5_000
      )
      await runTurn("Together", 2)
      expect(heard.filter(isWakeUp).length).toBeGreaterThanOrEqual(2)
      const output = heard.filter(isOutput).map((entry) => JSON.parse(entry.payload.slice(entry.payload.indexOf(" ") + 1)))
      expect(output.length).toBeGreaterThanOrEqual(2)
      expect(output.map((delta) => delta.delta).join("")).toBe(LONG)
    } finally {
      await listener.end()
      await server?.stop()
    }
  }, TIMEOUT_MS)
})
