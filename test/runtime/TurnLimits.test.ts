/**
 * What a model can make one turn do (docs/runtime.md, "Limits of a turn"), through the real server
 * and the scripted provider over HTTP: a model that never stops calling tools ends its turn after
 * the turn's model calls (5 here: AppConfig.maxTurnSteps, 500 by default), with an error saying
 * what to do; the agent is idle and its next input runs.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { AgentId, TurnId } from "../../src/domain/shared/Ids.ts"
import { stepLimitError } from "../../src/services/runtime/TurnLimits.ts"
import { type RuntimeProject, runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { TestAppLive } from "../support/TestApp.ts"
import { fastRetries } from "./RuntimeLayer.ts"

const MAX_STEPS = 5

const TestLive = Layer.mergeAll(TestAppLive({ maxTurnSteps: MAX_STEPS }), ScriptedProvider.layer).pipe(Layer.provide(fastRetries))

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
})
