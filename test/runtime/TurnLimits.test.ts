/**
 * What a model can make one turn do (docs/runtime.md, "Limits of a turn"), through the real server
 * and the scripted provider over HTTP: a model that never stops calling tools ends its turn after
 * the turn's model calls (5 here: AppConfig.maxTurnSteps, 500 by default), and an answer of more
 * tool calls than MAX_TOOL_CALLS_PER_ANSWER fails its model call, so its turn, recording nothing
 * of it; one of exactly that many is recorded, by the one statement and by the transaction. Each time the turn
 * fails with an error saying what to do, the agent is idle and its next input runs.
 */
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { AgentId, TurnId } from "../../src/domain/shared/Ids.ts"
import { MAX_TOOL_CALLS_PER_ANSWER } from "../../src/services/runtime/model/ModelCallLimits.ts"
import { stepLimitError } from "../../src/services/runtime/TurnLimits.ts"
import { type RuntimeProject, runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider, type ScriptedOutput } from "../support/ScriptedProvider.ts"
import { TestAppLive } from "../support/TestApp.ts"
import { fastRetries } from "./RuntimeLayer.ts"

const MAX_STEPS = 5

const TestLive = Layer.mergeAll(TestAppLive({ maxTurnSteps: MAX_STEPS }), ScriptedProvider.layer).pipe(Layer.provide(fastRetries))

/** `count` calls of the tool `name` in one answer. */
const calls = (name: string, count: number): ReadonlyArray<ScriptedOutput> =>
  Array.from({ length: count }, (_, index) => ({ type: "tool_call" as const, name, input: { query: `item ${index}` } }))

/** The agent's turns, oldest first, once its turn `turnId` has ended and the agent is idle. */
const endedTurn = (rt: RuntimeProject, agentId: AgentId, turnId: TurnId, timeout: `${number} seconds` = "30 seconds") =>
  Effect.gen(function*() {
    yield* rt.idle(agentId, timeout)
    return yield* rt.client.agents.getTurn({ params: { ...rt.agentPath(agentId), turnID: turnId } })
  })

/** The next input of an idle agent runs: "Go on" is answered "Continuing." and its turn completes. */
const nextInputRuns = (rt: RuntimeProject, agentId: AgentId) =>
  Effect.gen(function*() {
    const provider = yield* ScriptedProvider
    yield* provider.script([Reply.text("Continuing.")], { model: rt.slug })
    const next = yield* rt.send(agentId, "Go on")
    expect(next.disposition).toBe("started")
    const turn = yield* endedTurn(rt, agentId, next.event.turn_id as TurnId)
    expect(turn).toMatchObject({ status: "completed", model_calls: 1 })
  })

/** The agent's tool calls by state and outcome, counted in the database (the API lists 100 at most a page). */
const callStates = (agentId: AgentId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ state: string; outcome: string | null; count: string }>`
      SELECT state, outcome, count(*) FROM tool_calls WHERE agent_id = ${agentId} GROUP BY state, outcome`).pipe(
      Effect.map((rows) => rows.map((row) => [row.state, row.outcome, Number(row.count)])),
      Effect.orDie
    )

const requestsOf = (slug: string) =>
  Effect.map(Effect.flatMap(ScriptedProvider, (provider) => provider.requests), (all) => all.filter((r) => r.body?.model === slug))

layer(TestLive, { timeout: "120 seconds", excludeTestServices: true })("turn limits", (it) => {
  it.effect("a model that keeps calling a tool that fails at once: the turn fails after its model calls, saying so; the next input runs", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      // Every call of this model answers one call of a tool the config does not offer (about 2 KB
      // of arguments): its result fails at once, and the model is called again.
      const padding = "x".repeat(2_000)
      yield* provider.answerByDefault((body) =>
        body.model === rt.slug ? Reply.toolCall("missing_tool", { padding }) : Reply.error(500, "not this test's model")
      )
      const agent = yield* rt.launch()
      const accepted = yield* rt.send(agent.id, "Loop")
      const turn = yield* endedTurn(rt, agent.id, accepted.event.turn_id as TurnId)
      yield* provider.answerByDefault(Reply.error(500, "no default"))

      expect(turn).toMatchObject({ status: "failed", error: stepLimitError(MAX_STEPS), model_calls: MAX_STEPS })
      expect(turn.error).toContain("send a new input to continue")
      expect(yield* requestsOf(rt.slug)).toHaveLength(MAX_STEPS)
      const toolCalls = yield* rt.toolCalls(agent.id)
      expect(toolCalls).toHaveLength(MAX_STEPS)
      expect(toolCalls.every((call) => call.state === "completed" && call.outcome === "failed")).toBe(true)
      const events = yield* rt.events(agent.id)
      expect(events[events.length - 1]).toMatchObject({ event_kind: "turn", turn_status: "failed", error: stepLimitError(MAX_STEPS) })

      yield* nextInputRuns(rt, agent.id)
      // The new turn's request holds the stopped turn's calls and results.
      const requests = yield* requestsOf(rt.slug)
      expect(JSON.stringify(requests[requests.length - 1].body).match(/missing_tool/g)?.length).toBeGreaterThanOrEqual(MAX_STEPS)
    }))

  // Before the limit, 5,000 calls failed the turn on an internal error: `lookup` calls (each waiting
  // for a result, recorded by one statement) overflowed the stack building the statement; calls of
  // a tool not offered (the transaction) Postgres's 32,767 bind parameters (45,005). The model call
  // now stops at the 257th, as it arrives (ModelCallLimits.ts; each format in HostileProvider.test.ts).
  it.effect(`an answer of 5,000 tool calls: the model call stops past ${MAX_TOOL_CALLS_PER_ANSWER}, the turn fails naming the limit, nothing of the answer is recorded; the next input runs`, () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.answer([{ type: "text", text: "Looking everything up." }, ...calls("lookup", 5_000)])], {
        model: rt.slug
      })
      const agent = yield* rt.launch()
      const accepted = yield* rt.send(agent.id, "Look up everything")
      const turn = yield* endedTurn(rt, agent.id, accepted.event.turn_id as TurnId)

      expect(turn).toMatchObject({ status: "failed", model_calls: 1 })
      expect(turn.error).toMatch(
        new RegExp(
          `^The model provider failed: The model provider at 127\\.0\\.0\\.1:\\d+ sent an answer of more than ${MAX_TOOL_CALLS_PER_ANSWER} tool calls`
        )
      )
      expect(yield* callStates(agent.id)).toEqual([])
      expect((yield* rt.events(agent.id)).map((event) => event.event_kind)).toEqual(["agent_input", "turn", "turn"])

      yield* nextInputRuns(rt, agent.id)
    }))

  it.effect(`an answer of exactly ${MAX_TOOL_CALLS_PER_ANSWER} custom calls is recorded (one statement): every call ready, the agent waiting`, () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.answer(calls("lookup", MAX_TOOL_CALLS_PER_ANSWER))], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "Look up a lot")
      yield* rt.waiting(agent.id)
      expect(yield* callStates(agent.id)).toEqual([["ready", null, MAX_TOOL_CALLS_PER_ANSWER]])
      const events = yield* rt.events(agent.id)
      expect(events.filter((event) => event.event_kind === "tool_call")).toHaveLength(MAX_TOOL_CALLS_PER_ANSWER)
      yield* rt.client.agents.control({ params: rt.agentPath(agent.id), payload: { control_type: "cancel_current" } })
      yield* rt.idle(agent.id)
    }))

  it.effect(`an answer of exactly ${MAX_TOOL_CALLS_PER_ANSWER} calls of a tool not offered is recorded (the transaction); the turn goes on`, () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.answer(calls("missing_tool", MAX_TOOL_CALLS_PER_ANSWER)), Reply.text("Done.")], {
        model: rt.slug
      })
      const agent = yield* rt.launch()
      const accepted = yield* rt.send(agent.id, "Look up a lot")
      const turn = yield* endedTurn(rt, agent.id, accepted.event.turn_id as TurnId)
      expect(turn).toMatchObject({ status: "completed", model_calls: 2 })
      expect(yield* callStates(agent.id)).toEqual([["completed", "failed", MAX_TOOL_CALLS_PER_ANSWER]])
    }))
})
