/**
 * Recovery of what a process that died right after a commit left undone (docs/runtime.md, "What
 * happens on a crash"; docs/scale-out.md): here, the workflow of a turn that was never started.
 * Recovery asks the cluster's storage whether a turn's workflow was started and whether a wait's
 * resolution was sent (`turnStarted`, `signalSent`), so this also pins the keys
 * ClusterWorkflowEngine gives the turn workflow's messages.
 */
import { EntityAddress, EntityId, EntityType, MessageStorage, Sharding } from "effect/cluster"
import { expect } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { TurnRecovery } from "../../src/services/runtime/TurnRecovery.ts"
import { IN_MEMORY_WAIT } from "../../src/services/runtime/TurnWaits.ts"
import { signalSent, turnStarted, TurnWorkflow, type TurnPayload } from "../../src/services/runtime/TurnWorkflow.ts"
import { eventually } from "../support/Polling.ts"
import { deferredTokenOf, text, turnAwaitingLookup } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

/** Removes every message of a turn's workflow from the cluster's storage: as if it had never been started. */
const forgetWorkflow = (payload: TurnPayload) =>
  Effect.gen(function*() {
    const sharding = yield* Sharding.Sharding
    const storage = yield* MessageStorage.MessageStorage
    const entityId = EntityId.make(yield* TurnWorkflow.executionId(payload))
    yield* storage.clearAddress(EntityAddress.make({
      entityType: EntityType.EntityType.make("Workflow/AgentTurn"),
      entityId,
      shardId: sharding.getShardId(entityId, "default")
    }))
  })

describeRuntime()("recovery", (it) => {
  it.effect("a turn whose workflow was never started is started by recovery; its recorded model call is not made again", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { agent, call, payload, rt } = yield* turnAwaitingLookup(provider)
      expect(call.state).toBe("ready")
      expect(yield* turnStarted(payload)).toBe(true)
      const token = yield* deferredTokenOf(call.id)
      expect(yield* signalSent(token)).toBe(false)

      // The workflow waits for the result in memory first (TurnWaits), then durably: once it waits
      // durably no run of it is left, as after a process that died before sending it.
      yield* Effect.sleep(Duration.sum(IN_MEMORY_WAIT, Duration.seconds(1)))
      yield* forgetWorkflow(payload)
      expect(yield* turnStarted(payload)).toBe(false)
      yield* Effect.flatMap(TurnRecovery, (recovery) => recovery.recover)
      yield* eventually(turnStarted(payload), (started) => started, "the workflow started again")

      yield* rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(agent.id), toolCallID: call.id },
        payload: { outcome: "succeeded", content_blocks: text("green") }
      })
      // The result is handed to the workflow waiting for it in this process, without a signal
      // (TurnWaits; test/runtime/TurnWaits.test.ts sends one, after the in-memory wait).
      expect(yield* signalSent(token)).toBe(false)
      yield* rt.idle(agent.id)
      const events = yield* rt.events(agent.id)
      expect(events.map((event) => event.event_kind)).toEqual([
        "agent_input",
        "turn",
        "tool_call",
        "tool_result",
        "model_output",
        "turn"
      ])
      expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6])
      expect(events[5]).toMatchObject({ turn_status: "completed" })
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      expect(requests).toHaveLength(2)
      expect(JSON.stringify(requests[1].body)).toContain("green")
    }))
})
