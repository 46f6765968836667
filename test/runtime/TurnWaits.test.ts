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
import { WorkflowEngine } from "effect/workflow"
import { Duration, Effect } from "effect"
import { TurnId } from "../../src/domain/shared/Ids.ts"
import { IN_MEMORY_WAIT, TurnWaits } from "../../src/services/runtime/TurnWaits.ts"
import { signalSent, turnExecutionId, TurnWorkflow } from "../../src/services/runtime/TurnWorkflow.ts"
import { deferredTokenOf, text, turnAwaitingLookup } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

/** A turn that calls the custom tool once, its result posted after `delay`: whether its signal was sent. */
const resultAfter = (delay: Duration.Input) =>
  Effect.gen(function*() {
    const provider = yield* ScriptedProvider
    const { agent, call, payload, rt } = yield* turnAwaitingLookup(provider)
    yield* Effect.sleep(delay)
    yield* rt.client.toolCalls.submitResult({
      params: { ...rt.agentPath(agent.id), toolCallID: call.id },
      payload: { outcome: "succeeded", content_blocks: text("green") }
    })
    yield* rt.idle(agent.id)
    const events = yield* rt.events(agent.id)
    expect(events.map((event) => event.event_kind)).toEqual(["agent_input", "turn", "tool_call", "tool_result", "model_output", "turn"])
    expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6])
    expect(events[5]).toMatchObject({ turn_id: payload.turn_id, turn_status: "completed" })
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

  it.effect("a call resolved between its step's record and its wait, without a hand-over (as by another process): the wait goes on at once", () =>
    Effect.gen(function*() {
      const waits = yield* TurnWaits
      const { agent, call, rt } = yield* turnAwaitingLookup(yield* ScriptedProvider)
      // A wait on the call kept as a step of another run of the turn would keep it; the result is
      // handed over to the turn's own workflow, not to this run, which is told of it only by the
      // agent's timeline having gone on, as when another process commits it before the wait's
      // waiter is registered (its wake-up then comes too early for the wait).
      const run = { agent_id: agent.id, turn_id: TurnId.make(`turn_${"x".repeat(26)}`) }
      yield* waits.expect(run, [{ tool_call_id: call.id, approval: false, then: "result" }])
      yield* rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(agent.id), toolCallID: call.id },
        payload: { outcome: "succeeded", content_blocks: text("green") }
      })
      const executionId = yield* turnExecutionId(run)
      const started = Date.now()
      yield* waits.wait(run, executionId, "result", call.id).pipe(
        Effect.provideService(WorkflowEngine.WorkflowInstance, WorkflowEngine.WorkflowInstance.initial(TurnWorkflow, executionId))
      )
      expect(Date.now() - started).toBeLessThan(Duration.toMillis(IN_MEMORY_WAIT) / 2)
      yield* rt.idle(agent.id)
    }))
})
