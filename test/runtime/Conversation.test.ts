/**
 * A two-step, tool-using conversation in each wire format, end to end through the typed client
 * against the scripted provider: the timeline, the tool call and its result, the turn's usage,
 * and what the provider received (tools, history with the tool result, cache controls, reasoning).
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"
import { eventually } from "../support/Polling.ts"
import { runtimeProject, text } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { ID_PATTERN } from "../support/TestApp.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

const formats: ReadonlyArray<ApiFormat> = ["openai-responses", "openai-chat-completions", "anthropic-messages"]

describeRuntime()("conversation", (it) => {
  for (const format of formats) {
    it.effect(`${format}: input -> tool call -> custom result -> answer`, () =>
      Effect.gen(function*() {
        const provider = yield* ScriptedProvider
        const rt = yield* runtimeProject(provider, { format })
        yield* provider.script([
          Reply.answer([{ type: "text", text: "Let me look." }, { type: "tool_call", name: "lookup", input: { query: "weather" }, call_id: "call_1" }], {
            usage: { input_tokens: 100, output_tokens: 10 }
          }),
          Reply.text("It is sunny.", { usage: { input_tokens: 150, output_tokens: 5 } })
        ], { model: rt.slug })
        const agent = yield* rt.launch()
        const accepted = yield* rt.send(agent.id, "What is the weather?")
        expect(accepted.disposition).toBe("started")
        expect(accepted.event).toMatchObject({ event_kind: "agent_input", is_opening_event: true, turn_sequence: 0 })
        const turnId = accepted.event.turn_id!

        yield* rt.waiting(agent.id)
        const [call] = yield* rt.toolCalls(agent.id)
        expect(call).toMatchObject({ name: "lookup", type: "custom", state: "ready", provider_call_id: "call_1", input: { query: "weather" } })
        expect(call.id).toMatch(ID_PATTERN("tcl"))
        expect((yield* rt.agent(agent.id)).current_turn_id).toBe(turnId)

        const accepted2 = yield* rt.client.toolCalls.submitResult({
          params: { ...rt.agentPath(agent.id), toolCallID: call.id },
          payload: { outcome: "succeeded", content_blocks: text("sunny, 24C") }
        })
        expect(accepted2.tool_call.state).toBe("completed")
        expect(accepted2.tool_result.outcome).toBe("succeeded")
        yield* rt.idle(agent.id)

        const events = yield* rt.events(agent.id)
        expect(events.map((event) => event.event_kind)).toEqual([
          "agent_input",
          "turn",
          "model_output",
          "tool_call",
          "tool_result",
          "model_output",
          "turn"
        ])
        expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7])
        expect(events.every((event) => event.turn_id === turnId)).toBe(true)
        expect(events.map((event) => event.turn_sequence)).toEqual([0, 1, 2, 3, 4, 5, 6])
        const last = events[6]
        expect(last).toMatchObject({
          event_kind: "turn",
          turn_status: "completed",
          error: null,
          usage: { input_tokens: 250, output_tokens: 15 }
        })
        expect(events[5]).toMatchObject({ content_blocks: [{ type: "text", text: "It is sunny." }] })
        expect(events[4]).toMatchObject({ id: accepted2.tool_result.event_id, tool_call_id: call.id, outcome: "succeeded" })
        const turn = yield* rt.client.agents.getTurn({ params: { ...rt.agentPath(agent.id), turnID: turnId } })
        expect(turn).toMatchObject({ status: "completed", model_calls: 2, usage: { input_tokens: 250, output_tokens: 15 } })

        const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
        expect(requests).toHaveLength(2)
        expect(requests.every((request) => request.format === format && request.stream)).toBe(true)
        const second = JSON.stringify(requests[1].body)
        expect(second).toContain("What is the weather?")
        expect(second).toContain("call_1")
        expect(second).toContain("sunny, 24C")
        expect(second).toContain("Let me look.")
        const toolNames = (body: Record<string, any>) =>
          (body.tools as Array<any>).map((tool) => tool.name ?? tool.function?.name).sort()
        expect(toolNames(requests[0].body!)).toEqual(["ask_question", "deploy", "lookup"])
      }))
  }

  it.effect("a turn with no tool call completes after one model call; the next input runs as a second turn with the history", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, { format: "anthropic-messages" })
      yield* provider.script([Reply.text("Hello!"), Reply.text("Again!")], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "Hi")
      yield* rt.idle(agent.id)
      yield* rt.send(agent.id, "Hi again")
      yield* eventually(rt.events(agent.id), (events) => events.filter((e) => e.event_kind === "turn" && e.turn_status === "completed").length === 2, "two turns")
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      expect(requests[1].body!.messages).toEqual([
        { role: "user", content: [{ type: "text", text: "Hi" }] },
        { role: "assistant", content: [{ type: "text", text: "Hello!" }] },
        { role: "user", content: [expect.objectContaining({ type: "text", text: "Hi again" })] }
      ])
    }))
})
