/**
 * A turn's workflow execution id is the one the Effect 3 build derived (src/services/runtime/TurnWorkflow.ts,
 * `turnExecutionId`): the turns in flight when a deployment upgrades have their executions, their
 * `run`/`deferred` messages and the tokens on tool_calls / interactions rows under it, and a turn's id
 * maps to one execution for ever. The ids and tokens below were written by the Effect 3 build
 * (/work/main, @effect/workflow 0.19) for real turns (docs/effect4-migration.md, "Turns in flight").
 */
import { describe, expect, it as plain } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { DurableDeferred } from "effect/workflow"
import { Effect } from "effect"
import type { AgentId, ToolCallId, TurnId } from "../../src/domain/shared/Ids.ts"
import { TurnRecovery } from "../../src/services/runtime/TurnRecovery.ts"
import {
  signalToken,
  turnExecutionId,
  turnSignal,
  turnStarted,
  TurnWorkflow,
  type TurnPayload
} from "../../src/services/runtime/TurnWorkflow.ts"
import { deferredTokenOf, text, turnAwaitingLookup } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

/** Two turns of the Effect 3 build, each waiting on a tool call, as its tables held them. */
const effect3 = {
  result: {
    payload: { turn_id: "turn_2al5e7ddfgy63bxpymledogkgo" as TurnId, agent_id: "agt_2al5e7dbws73br6brwajo4sh7c" as AgentId },
    executionId: "ece1224b9b3c876607d264cf50944d9c",
    toolCallId: "tcl_2al5e7df7pj27xygtrmrx56zqk" as ToolCallId,
    token: "WyJBZ2VudFR1cm4iLCJlY2UxMjI0YjliM2M4NzY2MDdkMjY0Y2Y1MDk0NGQ5YyIsInJlc3VsdC90Y2xfMmFsNWU3ZGY3cGoyN3h5Z3RybXJ4NTZ6cWsiXQ"
  },
  approval: {
    payload: { turn_id: "turn_2al5e7e5hm4iel6m2enysofdyo" as TurnId, agent_id: "agt_2al5e7e3bsxbcaysro4dgt7hfk" as AgentId },
    executionId: "129cf9c017b201cab49294e96eb6c910",
    toolCallId: "tcl_2al5e7e5xvwxxgcjvyafuye5eo" as ToolCallId,
    token:
      "WyJBZ2VudFR1cm4iLCIxMjljZjljMDE3YjIwMWNhYjQ5Mjk0ZTk2ZWI2YzkxMCIsImFwcHJvdmFsL3RjbF8yYWw1ZTdlNXh2d3h4Z2NqdnlhZnV5ZTVlbyJd"
  }
}

describe("turn execution ids", () => {
  plain.effect("are the Effect 3 build's, through every way the runtime derives them", () =>
    Effect.gen(function*() {
      for (const turn of [effect3.result, effect3.approval]) {
        expect(yield* turnExecutionId(turn.payload)).toBe(turn.executionId)
        expect(yield* TurnWorkflow.executionId(turn.payload)).toBe(turn.executionId)
      }
      expect(yield* signalToken(effect3.result.payload, "result", effect3.result.toolCallId)).toBe(effect3.result.token)
      expect(yield* signalToken(effect3.approval.payload, "approval", effect3.approval.toolCallId)).toBe(effect3.approval.token)
      expect(
        yield* DurableDeferred.tokenFromPayload(turnSignal("result", effect3.result.toolCallId), {
          workflow: TurnWorkflow,
          payload: effect3.result.payload
        })
      ).toBe(effect3.result.token)
      // An Effect 3 token names the execution, the workflow and the wait as Effect 4 reads them.
      expect(DurableDeferred.TokenParsed.fromString(effect3.approval.token)).toMatchObject({
        workflowName: "AgentTurn",
        executionId: effect3.approval.executionId,
        deferredName: `approval/${effect3.approval.toolCallId}`
      })
    }))
})

/** The executions of a turn's workflow in the cluster's storage: one per `run` message. */
const executionsOf = (payload: TurnPayload) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ entity_id: string }>`
      SELECT entity_id FROM cluster_messages
      WHERE entity_type = 'Workflow/AgentTurn' AND tag = 'run' AND payload::jsonb ->> 'turn_id' = ${payload.turn_id}`.pipe(
      Effect.map((rows) => rows.map((row) => row.entity_id))
    ))

describeRuntime()("a turn's one execution", (it) => {
  it.effect("is started under the Effect 3 id, its waits' tokens name it, and recovery starts no second one", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { agent, call, payload, rt } = yield* turnAwaitingLookup(provider)
      const executionId = yield* turnExecutionId(payload)
      expect(yield* executionsOf(payload)).toEqual([executionId])
      expect(DurableDeferred.TokenParsed.fromString(yield* deferredTokenOf(call.id))).toMatchObject({
        workflowName: "AgentTurn",
        executionId,
        deferredName: `result/${call.id}`
      })

      // As at the start of an upgraded process: the turn's workflow counts as started.
      expect(yield* turnStarted(payload)).toBe(true)
      yield* Effect.flatMap(TurnRecovery, (recovery) => recovery.recover)
      expect(yield* executionsOf(payload)).toEqual([executionId])

      yield* rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(agent.id), toolCallID: call.id },
        payload: { outcome: "succeeded", content_blocks: text("green") }
      })
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
      expect(events[5]).toMatchObject({ turn_status: "completed" })
      expect(yield* executionsOf(payload)).toEqual([executionId])
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      expect(requests).toHaveLength(2)
    }))
})
