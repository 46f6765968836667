/**
 * What a daemon sends that the database cannot store (docs/runtime.md, "Text the platform
 * receives"), each such character kept as U+FFFD:
 *
 * - a real daemon's `run_command` whose output holds NUL bytes: the call completes, its result
 *   holds U+FFFD where each NUL was, the agent goes idle. Without the replacement the result was
 *   never stored ("unsupported Unicode escape sequence"), the daemon was never acknowledged and
 *   the agent stayed `running`;
 * - a daemon spoken by hand, as one in another language could speak: a hello whose operations
 *   and tools hold a NUL (the machine comes online; the connection failed before), a tool result
 *   with unpaired surrogate escapes and an array nested 100,000 deep (kept to 64 levels of the
 *   message), and a file read for the files route holding both.
 */
import { expect } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { afterAll } from "vitest"
import { DEEPER_THAN_LIMIT } from "../../src/services/shared/StorableJson.ts"
import { connectedMachine, killDaemons } from "../support/Daemons.ts"
import { handDaemon } from "../support/HandDaemon.ts"
import { commandConfig, type RuntimeProject, runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "../runtime/RuntimeLayer.ts"

afterAll(killDaemons)

/** U+FFFD, what takes the place of each character that cannot be stored. */
const R = "\ufffd"

/** The JSON of the agent's tool results' content blocks, in order. */
const resultTexts = (rt: RuntimeProject, agentId: Parameters<RuntimeProject["events"]>[0]) =>
  Effect.map(rt.events(agentId), (events) =>
    events.flatMap((event) => event.event_kind === "tool_result" ? [event.content_blocks] : []))

describeRuntime("120 seconds")("daemon text the database cannot store", (it) => {
  it.effect("a real daemon's run_command printing NUL bytes: the call completes with U+FFFD in its output, the agent goes idle", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { machine, work } = yield* connectedMachine(rt, "nul-printer")
      const config = yield* commandConfig(rt, { machine: machine.id, cwd: work })
      yield* provider.script([
        Reply.toolCall("run_command", { command: "printf 'a\\000b'; printf 'c\\000\\000d' >&2" }),
        Reply.text("Done.")
      ], { model: rt.slug })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* rt.send(agent.id, "Print a NUL")
      yield* rt.idle(agent.id, "45 seconds")

      const [call] = yield* rt.toolCalls(agent.id)
      expect(call).toMatchObject({ name: "run_command", state: "completed", outcome: "succeeded" })
      const [blocks] = yield* resultTexts(rt, agent.id)
      expect(blocks).toHaveLength(1)
      const output = JSON.parse((blocks[0] as { text: string }).text)
      expect(output).toMatchObject({ exit_code: 0, stdout: `a${R}b`, stderr: `c${R}${R}d` })
      // The model read the result as stored, and answered: the turn completed.
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      expect(requests).toHaveLength(2)
      expect(JSON.stringify(requests[1].body)).toContain(`a${R}b`)
      const turns = yield* rt.client.agents.listTurns({ params: rt.agentPath(agent.id), query: {} })
      expect(turns.data.map((turn) => turn.status)).toEqual(["completed"])
    }), { timeout: 120_000 })

  it.effect("a daemon spoken by hand: a NUL in its hello, unpaired surrogates in a tool result, both in a file it reads", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      // JSON.stringify writes the NUL as the escape \u0000, as a daemon's JSON may.
      const daemon = yield* handDaemon(rt, "by-hand", {
        daemon_version: "1.0.0\u0000",
        operations: ["tool", "file.read", "odd\u0000operation"],
        tools: ["run_command", "odd\u0000tool"]
      })
      const machineId = daemon.machineId

      // A tool call: its result's output written with unpaired surrogate escapes.
      const config = yield* commandConfig(rt, { machine: machineId, cwd: "/tmp" })
      yield* provider.script([Reply.toolCall("run_command", { command: "anything" }), Reply.text("Done.")], { model: rt.slug })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* rt.send(agent.id, "Run it")
      const toolRequest = yield* daemon.requestFor("tool")
      yield* daemon.send({
        type: "result",
        request_id: toolRequest.request_id,
        outcome: "succeeded",
        output: {
          exit_code: 0,
          stdout: "high\ud800 low\udc00 pair😀",
          stderr: "nul\u0000",
          // Nested 100,000 deep: JSON.stringify overflowed the stack storing it, and the agent
          // stayed running; the message is level 1, the output 2, `nested` 3.
          nested: JSON.parse("[".repeat(100_000) + "]".repeat(100_000)),
          output_truncated: false,
          timed_out: false,
          duration_ms: 1
        }
      })
      yield* rt.idle(agent.id, "30 seconds")
      const [call] = yield* rt.toolCalls(agent.id)
      expect(call).toMatchObject({ state: "completed", outcome: "succeeded" })
      const [blocks] = yield* resultTexts(rt, agent.id)
      const output = JSON.parse((blocks[0] as { text: string }).text)
      expect(output).toMatchObject({ stdout: `high${R} low${R} pair😀`, stderr: `nul${R}` })
      let nested: unknown = output.nested
      let levels = 0
      for (; Array.isArray(nested); levels++) nested = nested[0]
      expect({ levels, nested }).toEqual({ levels: 62, nested: DEEPER_THAN_LIMIT })
      expect(yield* daemon.acknowledged).toContain(toolRequest.request_id)

      // The files route: the daemon's read answers text holding both.
      const read = yield* Effect.forkChild(
        rt.client.machines.readFile({ params: { orgID: rt.org.id, machineID: machineId }, query: { path: "/tmp/odd.txt" } })
      )
      const fileRequest = yield* daemon.requestFor("file.read")
      yield* daemon.send({
        type: "result",
        request_id: fileRequest.request_id,
        outcome: "succeeded",
        output: {
          path: "/tmp/odd.txt",
          digest: `sha256:${"0".repeat(64)}`,
          size: 4,
          encoding: "utf-8",
          content: "a\u0000b\udfff",
          read_only: false
        }
      })
      const file = yield* Fiber.join(read)
      expect(file).toMatchObject({ path: "/tmp/odd.txt", content: `a${R}b${R}` })
      yield* daemon.close
    }), { timeout: 120_000 })
})
