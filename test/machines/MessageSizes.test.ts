/**
 * The frame limits of the machine WebSocket (docs/daemon-protocol.md, "Message sizes"):
 *
 * - spoken by hand: a frame of DAEMON_MESSAGE_MAX_BYTES is read (its result acknowledged); one
 *   byte more closes the connection with 1009, logged once with the machine's id. Before, `ws`
 *   took frames of up to 100 MiB;
 * - a real daemon whose ledger holds a result over the limit (an older daemon's, in its state
 *   file): the call fails with `internal_error` naming the result's size and the limit, the turn
 *   ends, and the daemon connects once. Before, the server closed each connection with 1009 and
 *   the daemon sent the result again after every reconnect, for ever, the turn never ending;
 * - a real daemon reading the largest file the files route moves, as text of control characters
 *   (the largest result a daemon legitimately sends, 60 MiB of JSON): answered whole;
 * - a request over what the daemon reads (SERVER_MESSAGE_MAX_BYTES), which no route makes (it is
 *   written in the mailbox's table here): failed `request_too_large` without being sent, the
 *   daemon connected once. Sent, the daemon would close each connection with 1009 and get it again
 *   after every reconnect.
 */
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, References } from "effect"
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll } from "vitest"
import { FILE_TRANSFER_MAX_BYTES } from "../../src/domain/machines/MachineFiles.ts"
import { DAEMON_MESSAGE_MAX_BYTES, SERVER_MESSAGE_MAX_BYTES } from "../../src/domain/machines/MessageSizes.ts"
import { connectedMachine, killDaemons, serverUrl, startDaemon } from "../support/Daemons.ts"
import { handDaemon } from "../support/HandDaemon.ts"
import { eventually } from "../support/Polling.ts"
import { commandConfig, runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { TestAppLive } from "../support/TestApp.ts"
import { fastRetries } from "../runtime/RuntimeLayer.ts"

afterAll(killDaemons)

/** The app's warnings, as the JSON logger writes them. */
const logLines: Array<string> = []
const CapturedLogs = Logger.layer([Logger.make((options) => {
  logLines.push(Logger.formatJson.log(options))
})])

const AppWithLogs = Layer.mergeAll(TestAppLive(), ScriptedProvider.layer).pipe(
  Layer.provide(fastRetries),
  Layer.provide(Layer.merge(CapturedLogs, Layer.succeed(References.MinimumLogLevel, "Warn")))
)

/** A failed result for `requestId` whose frame takes exactly `bytes` bytes. */
const resultFrame = (requestId: string, bytes: number) => {
  const frame = (message: string) =>
    JSON.stringify({ type: "result", request_id: requestId, outcome: "failed", error: { code: "internal_error", message } })
  return frame("x".repeat(bytes - frame("").length))
}

/** How many times the daemon's output says it connected. */
const connections = (output: string) => output.split("\n").filter((line) => line.includes("connected to ")).length

layer(AppWithLogs, { timeout: "240 seconds", excludeTestServices: true })("the machine socket's message sizes", (it) => {
  it.effect("a frame of the limit is read; one byte more closes the connection with 1009, logged once", () =>
    Effect.gen(function*() {
      const rt = yield* runtimeProject(yield* ScriptedProvider)
      const daemon = yield* handDaemon(rt, "large-frames")
      const atLimit = resultFrame("unknown-at-limit", DAEMON_MESSAGE_MAX_BYTES)
      expect(Buffer.byteLength(atLimit)).toBe(DAEMON_MESSAGE_MAX_BYTES)
      yield* daemon.sendText(atLimit)
      yield* eventually(daemon.acknowledged, (ids) => ids.includes("unknown-at-limit"), "the result at the limit acknowledged", "60 seconds")

      yield* daemon.sendText(resultFrame("unknown-over-limit", DAEMON_MESSAGE_MAX_BYTES + 1))
      expect(yield* daemon.closed).toBe(1009)
      expect(yield* daemon.acknowledged).not.toContain("unknown-over-limit")
      const logged = yield* eventually(
        Effect.sync(() => logLines.filter((line) => line.includes(`machine ${daemon.machineId} sent a frame over`))),
        (lines) => lines.length > 0,
        "the close logged"
      )
      expect(logged).toHaveLength(1)
      expect(logged[0]).toContain(`over ${DAEMON_MESSAGE_MAX_BYTES} bytes; its connection was closed (1009)`)
    }), { timeout: 120_000 })

  it.effect("a result over the limit in the daemon's ledger: the call fails saying so, the daemon connects once", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { daemon, dirs, machine, token, work } = yield* connectedMachine(rt)
      yield* Effect.promise(() => daemon.stop())
      const config = yield* commandConfig(rt, { machine: machine.id, cwd: work })
      yield* provider.script([Reply.toolCall("run_command", { command: "echo hi" }), Reply.text("Done.")], { model: rt.slug })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* rt.send(agent.id, "Run it")
      // The call's request waits for the machine, offline.
      const sql = yield* SqlClient.SqlClient
      const [request] = yield* eventually(
        sql<{ request_id: string }>`SELECT request_id FROM machine_requests WHERE machine_id = ${machine.id}`,
        (rows) => rows.length === 1,
        "the call's request stored"
      )
      // An older daemon ran it and kept its whole output: the ledger holds the result, done, unacknowledged.
      const stdout = "x".repeat(DAEMON_MESSAGE_MAX_BYTES)
      const snapshot = JSON.parse(readFileSync(dirs.state, "utf8"))
      writeFileSync(dirs.state, JSON.stringify({
        version: 1,
        server: snapshot.server,
        machine_id: snapshot.machine_id,
        requests: {
          [request.request_id]: {
            state: "done",
            at: Date.now(),
            outcome: {
              outcome: "succeeded",
              output: { exit_code: 0, stdout, stderr: "", output_truncated: false, timed_out: false, duration_ms: 1 }
            }
          }
        }
      }))
      rmSync(`${dirs.state}.journal`, { force: true })

      const restarted = startDaemon({ server: yield* serverUrl, token, name: "worker", dirs: [work], state: dirs.state })
      yield* rt.idle(agent.id, "60 seconds")
      const [call] = yield* rt.toolCalls(agent.id)
      expect(call).toMatchObject({ name: "run_command", state: "completed", outcome: "failed" })
      const results = (yield* rt.events(agent.id)).flatMap((event) => event.event_kind === "tool_result" ? event.content_blocks : [])
      expect(results).toHaveLength(1)
      const text = (results[0] as { text: string }).text
      expect(text).toMatch(new RegExp(
        `^internal_error: the result was \\d+ bytes of JSON; the machine socket carries at most ${DAEMON_MESSAGE_MAX_BYTES}, so it was not sent$`
      ))
      expect(Number(/was (\d+) bytes/.exec(text)![1])).toBeGreaterThan(stdout.length)
      // A loop reconnected every second: give it the time to show.
      yield* Effect.sleep("5 seconds")
      expect(connections(restarted.output())).toBe(1)
      yield* Effect.promise(() => restarted.stop())
    }), { timeout: 180_000 })

  it.effect("the largest result a daemon sends, a 10 MiB file of control characters read whole: answered", () =>
    Effect.gen(function*() {
      const rt = yield* runtimeProject(yield* ScriptedProvider)
      const { daemon, machine, work } = yield* connectedMachine(rt)
      const content = "\u0001".repeat(FILE_TRANSFER_MAX_BYTES)
      const path = join(work, "controls.txt")
      writeFileSync(path, content)
      const file = yield* rt.client.machines.readFile({ params: { orgID: rt.org.id, machineID: machine.id }, query: { path } })
      expect(file).toMatchObject({ encoding: "utf-8", size: FILE_TRANSFER_MAX_BYTES })
      expect(file.content === content).toBe(true)
      expect(connections(daemon.output())).toBe(1)
      yield* Effect.promise(() => daemon.stop())
    }), { timeout: 180_000 })

  it.effect("a request over what the daemon reads: failed without being sent, the daemon connected once", () =>
    Effect.gen(function*() {
      const rt = yield* runtimeProject(yield* ScriptedProvider)
      const { daemon, machine, work } = yield* connectedMachine(rt)
      const path = join(work, "large.txt")
      const operation = { operation: "file.write", path, content: "a".repeat(SERVER_MESSAGE_MAX_BYTES), encoding: "utf-8" }
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        INSERT INTO machine_requests (request_id, machine_id, operation, state)
        VALUES ('file-too-large', ${machine.id}, ${JSON.stringify(operation)}::jsonb, 'pending')`
      const [row] = yield* eventually(
        sql<{ state: string; outcome: unknown }>`SELECT state, outcome FROM machine_requests WHERE request_id = 'file-too-large'`,
        (rows) => rows[0]?.state === "done",
        "the request completed",
        "30 seconds"
      )
      const outcome = typeof row.outcome === "string" ? JSON.parse(row.outcome) : row.outcome
      expect(outcome).toMatchObject({ outcome: "failed", error: { code: "request_too_large" } })
      expect(outcome.error.message).toMatch(new RegExp(
        `^the request is \\d+ bytes of JSON; the machine socket carries at most ${SERVER_MESSAGE_MAX_BYTES}, so it was not sent$`
      ))
      yield* Effect.sleep("5 seconds")
      expect(connections(daemon.output())).toBe(1)
      expect(existsSync(path)).toBe(false)
      yield* Effect.promise(() => daemon.stop())
    }), { timeout: 180_000 })
})
