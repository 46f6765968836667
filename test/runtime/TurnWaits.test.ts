/**
 * A wait handed over in memory (docs/runtime.md): a custom tool's result posted while the turn's
 * workflow waits for it is handed to the workflow without a durable signal; one posted after
 * IN_MEMORY_WAIT goes as a signal to a workflow that waits durably (which also pins the key of the
 * signal's message, `signalSent`). Either way the turn completes with every event once and each
 * model call made once. CrashRestart.test.ts kills a process after a result handed over (the
 * workflow's replay reads the call and goes on); ScaleOut.test.ts posts a result to another process
 * (its append wakes the waiting workflow).
 */
import { expect } from "@effect/vitest"
import { Duration, Effect } from "effect"
import type { TurnId } from "../../src/domain/shared/Ids.ts"
import { IN_MEMORY_WAIT } from "../../src/services/runtime/TurnWaits.ts"
import { signalSent } from "../../src/services/runtime/TurnWorkflow.ts"
import { deferredTokenOf, runtimeProject, text } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

/** A turn that calls the custom tool once, its result posted after `delay`: whether its signal was sent. */
const resultAfter = (delay: Duration.Input) =>
  Effect.gen(function*() {
    const provider = yield* ScriptedProvider
    const rt = yield* runtimeProject(provider)
    yield* provider.script([Reply.toolCall("lookup", { query: "status" }), Reply.text("All green.")], { model: rt.slug })
    const agent = yield* rt.launch()
    const accepted = yield* rt.send(agent.id, "Check the status")
    yield* rt.waiting(agent.id)
    const [call] = yield* rt.toolCalls(agent.id)
    yield* Effect.sleep(delay)
    yield* rt.client.toolCalls.submitResult({
      params: { ...rt.agentPath(agent.id), toolCallID: call.id },
      payload: { outcome: "succeeded", content_blocks: text("green") }
    })
    yield* rt.idle(agent.id)
    const events = yield* rt.events(agent.id)
    expect(events.map((event) => event.event_kind)).toEqual(["agent_input", "turn", "tool_call", "tool_result", "model_output", "turn"])
    expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6])
    expect(events[5]).toMatchObject({ turn_id: accepted.event.turn_id as TurnId, turn_status: "completed" })
    const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
    expect(requests).toHaveLength(2)
    expect(JSON.stringify(requests[1].body)).toContain("green")
    return yield* signalSent(yield* deferredTokenOf(call.id))
  })

describeRuntime()("a wait handed over in memory", (it) => {
  it.effect("a result posted while the workflow waits: handed over without a signal, the turn completes", () =>
    Effect.gen(function*() {
      expect(yield* resultAfter(0)).toBe(false)
    }))

  it.effect("a result posted after the in-memory wait: sent as a signal, the workflow resumes and completes", () =>
    Effect.gen(function*() {
      expect(yield* resultAfter(Duration.sum(IN_MEMORY_WAIT, Duration.millis(500)))).toBe(true)
    }))
})
