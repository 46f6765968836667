/**
 * A daemon's result completes only a request sent to its own machine (docs/daemon-protocol.md,
 * "The server must"): another machine's daemon, here of another organization, that sends a result
 * for a request it was never sent (its id guessed from the tool call's) is acknowledged and
 * ignored; the call waits for its own machine's answer, and takes it.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { commandCallSentTo, handDaemon } from "../support/HandDaemon.ts"
import { eventually } from "../support/Polling.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "../runtime/RuntimeLayer.ts"

/** A run_command output saying `stdout`. */
const output = (stdout: string) => ({
  exit_code: 0,
  stdout,
  stderr: "",
  output_truncated: false,
  timed_out: false,
  duration_ms: 1
})

describeRuntime("120 seconds")("results and the machine they come from", (it) => {
  it.effect("another organization's daemon answering this machine's request is ignored; this machine's answer completes the call", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const own = yield* handDaemon(rt, "own")
      const { agent, request } = yield* commandCallSentTo(rt, provider, own)

      const other = yield* runtimeProject(provider)
      const intruder = yield* handDaemon(other, "intruder")
      yield* intruder.send({ type: "result", request_id: request.request_id, outcome: "succeeded", output: output("forged") })
      // Acknowledged, as a result for an id the server does not know is, so the daemon forgets it.
      yield* eventually(intruder.acknowledged, (ids) => ids.includes(request.request_id), "the intruder acknowledged", "15 seconds")
      const [waiting] = yield* rt.toolCalls(agent.id)
      expect(waiting).toMatchObject({ name: "run_command", state: "running" })

      yield* own.send({ type: "result", request_id: request.request_id, outcome: "succeeded", output: output("genuine") })
      yield* rt.idle(agent.id, "30 seconds")
      const [call] = yield* rt.toolCalls(agent.id)
      expect(call).toMatchObject({ state: "completed", outcome: "succeeded" })
      const results = (yield* rt.events(agent.id)).flatMap((event) =>
        event.event_kind === "tool_result" ? [JSON.stringify(event.content_blocks)] : []
      )
      expect(results).toHaveLength(1)
      expect(results[0]).toContain("genuine")
      expect(results[0]).not.toContain("forged")
      yield* own.close
      yield* intruder.close
    }), { timeout: 120_000 })
})
