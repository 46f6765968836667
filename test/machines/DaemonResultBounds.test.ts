/**
 * What a daemon's result may store (docs/daemon-protocol.md, "What the server takes"), spoken by
 * hand as a faulty daemon could:
 *
 * - a `succeeded` result without `output`, and a `run_command` output past the daemon's own cap:
 *   each becomes a failed call (`internal_error`, saying what did not match the protocol), is
 *   acknowledged, and the agent goes idle with its events readable. Before, the first stored a
 *   result block without text (the agent's every later input failed), the second went whole into
 *   the model's history;
 * - a file read past the files route's 10 MiB: `503 service_unavailable` saying so, acknowledged;
 * - a legitimate file read whose row is larger than the database client's default 16 MiB message
 *   (3 MiB of control characters, six bytes each in jsonb's text): answered, and a copy sent again
 *   reads the row back and is acknowledged. Before, reading it back failed: never acknowledged,
 *   the daemon sent it again for ever;
 * - a hello with a thousand long tool names: stored bounded, the machine readable.
 */
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { FILE_TRANSFER_MAX_BYTES } from "../../src/domain/machines/MachineFiles.ts"
import { COMMAND_OUTPUT_MAX_BYTES } from "../../src/domain/machines/MachineTools.ts"
import { HELLO_NAME_MAX_CHARS, HELLO_NAMES_MAX } from "../../src/services/machines/MachinesRepository.ts"
import { commandCallSentTo, handDaemon } from "../support/HandDaemon.ts"
import { eventually } from "../support/Polling.ts"
import { type RuntimeProject, runtimeProject } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"
import { expectFailure } from "../support/TestApp.ts"
import { describeRuntime } from "../runtime/RuntimeLayer.ts"

const DIGEST = `sha256:${"0".repeat(64)}`

/** A run_command call answered by the hand daemon with `result` (its fields after the request id). */
const callAnswered = (result: Record<string, unknown>) =>
  Effect.gen(function*() {
    const provider = yield* ScriptedProvider
    const rt = yield* runtimeProject(provider)
    const daemon = yield* handDaemon(rt, "faulty")
    const { agent, request } = yield* commandCallSentTo(rt, provider, daemon)
    yield* daemon.send({ type: "result", request_id: request.request_id, ...result })
    yield* rt.idle(agent.id, "30 seconds")
    expect(yield* daemon.acknowledged).toContain(request.request_id)
    const [call] = yield* rt.toolCalls(agent.id)
    const results = (yield* rt.events(agent.id)).flatMap((event) => event.event_kind === "tool_result" ? event.content_blocks : [])
    const turns = yield* rt.client.agents.listTurns({ params: rt.agentPath(agent.id), query: {} })
    yield* daemon.close
    return { call, results, turns: turns.data.map((turn) => turn.status) }
  })

/** A files-route read answered by the hand daemon with `output`. */
const fileRead = (rt: RuntimeProject, output: Record<string, unknown>) =>
  Effect.gen(function*() {
    const daemon = yield* handDaemon(rt, "files")
    const read = yield* Effect.forkChild(Effect.result(
      rt.client.machines.readFile({ params: { orgID: rt.org.id, machineID: daemon.machineId }, query: { path: "/tmp/f" } })
    ))
    const request = yield* daemon.requestFor("file.read")
    yield* daemon.send({ type: "result", request_id: request.request_id, outcome: "succeeded", output })
    const answer = yield* Fiber.join(read)
    // The route is answered as the result is stored; the ack follows. A copy sent again (as after a
    // reconnect) reads the stored row back, and is acknowledged too.
    yield* eventually(daemon.acknowledged, (ids) => ids.includes(request.request_id), "the result acknowledged", "15 seconds")
    yield* daemon.send({ type: "result", request_id: request.request_id, outcome: "succeeded", output })
    yield* eventually(
      daemon.acknowledged,
      (ids) => ids.filter((id) => id === request.request_id).length === 2,
      "the copy acknowledged",
      "15 seconds"
    )
    yield* daemon.close
    return answer
  })

describeRuntime("120 seconds")("the bounds of a daemon's result", (it) => {
  it.effect("a succeeded result without output: the call fails with internal_error, the agent goes idle", () =>
    Effect.gen(function*() {
      const { call, results, turns } = yield* callAnswered({ outcome: "succeeded" })
      expect(call).toMatchObject({ name: "run_command", state: "completed", outcome: "failed" })
      expect(results).toHaveLength(1)
      expect(results[0]).toMatchObject({ type: "text" })
      const text = (results[0] as { text: string }).text
      expect(text).toMatch(/^internal_error: the daemon's output for run_command did not match the protocol: /)
      expect(turns).toEqual(["completed"])
    }), { timeout: 120_000 })

  it.effect("a run_command output past the daemon's cap: refused, not stored, the agent goes idle", () =>
    Effect.gen(function*() {
      const { call, results, turns } = yield* callAnswered({
        outcome: "succeeded",
        output: {
          exit_code: 0,
          stdout: "x".repeat(COMMAND_OUTPUT_MAX_BYTES),
          stderr: "y",
          output_truncated: false,
          timed_out: false,
          duration_ms: 1
        }
      })
      expect(call).toMatchObject({ state: "completed", outcome: "failed" })
      const text = (results[0] as { text: string }).text
      expect(text).toContain("internal_error: the daemon's output for run_command did not match the protocol")
      expect(text).toContain(`${COMMAND_OUTPUT_MAX_BYTES + 1} characters together; a command's output is cut at ${COMMAND_OUTPUT_MAX_BYTES}`)
      expect(text.length).toBeLessThan(10_000)
      expect(turns).toEqual(["completed"])
    }), { timeout: 120_000 })

  it.effect("a file read past the files route's maximum: 503 saying so, acknowledged", () =>
    Effect.gen(function*() {
      const rt = yield* runtimeProject(yield* ScriptedProvider)
      const answer = yield* fileRead(rt, {
        path: "/tmp/f",
        digest: DIGEST,
        size: FILE_TRANSFER_MAX_BYTES + 1,
        encoding: "utf-8",
        content: "a".repeat(FILE_TRANSFER_MAX_BYTES + 1),
        read_only: false
      })
      expect(answer._tag).toBe("Failure")
      const failure = (answer as { failure: { _tag: string; error: string } }).failure
      expect(failure._tag).toBe("ServiceUnavailable")
      expect(failure.error).toContain("did not match the protocol")
      expect(failure.error).toContain(`a file read whole is at most ${FILE_TRANSFER_MAX_BYTES} bytes`)
    }), { timeout: 120_000 })

  it.effect("a legitimate file read whose row passes 16 MiB: answered, its copy read back and acknowledged", () =>
    Effect.gen(function*() {
      const rt = yield* runtimeProject(yield* ScriptedProvider)
      const content = "\u0001".repeat(3 * 1024 * 1024)
      const answer = yield* fileRead(rt, { path: "/tmp/f", digest: DIGEST, size: content.length, encoding: "utf-8", content, read_only: false })
      expect(answer._tag).toBe("Success")
      const file = (answer as { success: { content: string } }).success
      expect(file.content.length).toBe(content.length)
      expect(file.content === content).toBe(true)
    }), { timeout: 120_000 })

  it.effect("a hello with a thousand long tool names: stored bounded, the machine readable", () =>
    Effect.gen(function*() {
      const rt = yield* runtimeProject(yield* ScriptedProvider)
      const tools = Array.from({ length: 1000 }, (_, i) => i % 2 === 0 ? `tool_${i}` : `long_${i}_${"t".repeat(10_000)}`)
      const daemon = yield* handDaemon(rt, "many-tools", { tools: ["run_command", ...tools] })
      const machine = yield* rt.client.machines.get({ params: { orgID: rt.org.id, machineID: daemon.machineId } })
      expect(machine).toMatchObject({ id: daemon.machineId, status: "online" })
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ tools: ReadonlyArray<string> }>`SELECT tools FROM machines WHERE id = ${daemon.machineId}`
      expect(row.tools).toHaveLength(HELLO_NAMES_MAX)
      expect(row.tools[0]).toBe("run_command")
      expect(row.tools.every((name) => name.length <= HELLO_NAME_MAX_CHARS)).toBe(true)
      yield* daemon.close
      yield* eventually(
        rt.client.machines.get({ params: { orgID: rt.org.id, machineID: daemon.machineId } }),
        (m) => m.status === "offline",
        "the machine offline",
        "15 seconds"
      )
      yield* rt.client.machines.remove({ params: { orgID: rt.org.id, machineID: daemon.machineId } })
      yield* expectFailure(rt.client.machines.get({ params: { orgID: rt.org.id, machineID: daemon.machineId } }))
    }), { timeout: 120_000 })
})
