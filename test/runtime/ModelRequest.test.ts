/**
 * What the provider receives: the model settings of the config (cache retention, reasoning
 * effort, output cap, conversation key), the model's current revision, provider config and key
 * at each call, and compaction with a tiny context window.
 */
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { eventually } from "../support/Polling.ts"
import { type RuntimeProject, runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider, type ScriptedProviderShape } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

const turnStatuses = (events: ReadonlyArray<{ event_kind: string; turn_status?: string }>) =>
  events.flatMap((event) => event.event_kind === "turn" ? [event.turn_status] : [])

describeRuntime()("model request", (it) => {
  it.effect("openai-responses: reasoning effort, output cap and the agent id as prompt cache key; reasoning summaries recorded", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, { supportsReasoning: true, modelLines: ["reasoning: { effort: high }"], maxOutputTokens: 777 })
      yield* provider.script([Reply.answer([{ type: "reasoning", text: "Thinking it over" }, { type: "text", text: "Done" }])], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "think")
      yield* rt.idle(agent.id)
      const [request] = (yield* provider.requests).filter((r) => r.body?.model === rt.slug)
      expect(request.body).toMatchObject({
        reasoning: { effort: "high" },
        max_output_tokens: 777,
        prompt_cache_key: agent.id,
        instructions: "You are the runtime test agent."
      })
      expect(request.headers.authorization).toBe("Bearer sk-scripted-key")
      const output = (yield* rt.events(agent.id)).find((event) => event.event_kind === "model_output")
      expect(output).toMatchObject({
        content_blocks: [{ type: "reasoning_summary", text: "Thinking it over" }, { type: "text", text: "Done" }]
      })
    }))

  it.effect("the instruction carries the SKILL.md texts of the config's skills, in its order, and leaves out a deleted one", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, {
        format: "anthropic-messages",
        skills: [
          { name: "style", text: "# Style\nWrite short sentences.", files: { "examples/good.md": "Short. Clear." } },
          { name: "release-notes", text: "# Release notes\nAlways list breaking changes first." }
        ]
      })
      yield* provider.script([Reply.text("ok"), Reply.text("ok again")], { model: rt.slug })
      const agent = yield* rt.launch()
      const instructionOfTurn = (input: string, turn: number) =>
        Effect.gen(function*() {
          yield* rt.send(agent.id, input)
          yield* rt.idle(agent.id)
          const requests = (yield* provider.requests).filter((r) => r.body?.model === rt.slug)
          return requests[turn].body!.system[0].text as string
        })
      const first = yield* instructionOfTurn("write notes", 0)
      expect(first.startsWith("You are the runtime test agent.")).toBe(true)
      expect(first).toContain("## style\n\n# Style\nWrite short sentences.")
      expect(first).toContain("## release-notes\n\n# Release notes\nAlways list breaking changes first.")
      expect(first.indexOf("## style")).toBeLessThan(first.indexOf("## release-notes"))
      expect(first).not.toContain("Short. Clear.")

      yield* rt.client.skills.remove({ params: { orgID: rt.org.id, skillID: rt.skills[0].id } })
      const second = yield* instructionOfTurn("more notes", 1)
      expect(second).not.toContain("## style")
      expect(second).toContain("Always list breaking changes first.")
    }))

  it.effect("cache_retention none sends no cache key; anthropic long sends one-hour cache controls", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const none = yield* runtimeProject(provider, { modelLines: ["cache_retention: none"] })
      const long = yield* runtimeProject(provider, { format: "anthropic-messages", modelLines: ["cache_retention: long"] })
      yield* provider.script([Reply.text("a")], { model: none.slug })
      yield* provider.script([Reply.text("b")], { model: long.slug })
      const agentNone = yield* none.launch()
      const agentLong = yield* long.launch()
      yield* none.send(agentNone.id, "hi")
      yield* long.send(agentLong.id, "hi")
      yield* none.idle(agentNone.id)
      yield* long.idle(agentLong.id)
      const requests = yield* provider.requests
      const noneBody = requests.find((r) => r.body?.model === none.slug)!.body!
      expect(noneBody.prompt_cache_key).toBeUndefined()
      const longBody = requests.find((r) => r.body?.model === long.slug)!.body!
      expect(longBody.system[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" })
      expect(longBody.tools.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "1h" })
      expect(longBody.headers).toBeUndefined()
      expect(requests.find((r) => r.body?.model === long.slug)!.headers["x-api-key"]).toBe("sk-scripted-key")
    }))

  it.effect("compaction: earlier turns are summarized by the model when the input does not fit, and the turn goes on", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, { contextWindow: 1600, maxOutputTokens: 200 })
      const filler = (word: string) => Array.from({ length: 450 }, () => word).join(" ")
      yield* provider.script([
        Reply.text("noted apples"),
        Reply.text("SUMMARY: the user talked about apples"),
        Reply.text("noted bananas")
      ], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, filler("apple"))
      yield* rt.idle(agent.id)
      const second = yield* rt.send(agent.id, filler("banana"))
      yield* eventually(rt.events(agent.id), (events) => turnStatuses(events).filter((s) => s === "completed").length === 2, "two turns")
      const events = yield* rt.events(agent.id)
      const firstEnd = events.find((event) => event.event_kind === "turn" && event.turn_status === "completed")!
      const compaction = events.find((event) => event.event_kind === "compaction")
      expect(compaction).toMatchObject({
        turn_id: second.event.turn_id,
        compacted_through_sequence: firstEnd.sequence,
        content_blocks: [{ type: "text", text: "SUMMARY: the user talked about apples" }]
      })
      const requests = (yield* provider.requests).filter((r) => r.body?.model === rt.slug)
      expect(requests).toHaveLength(3)
      expect(JSON.stringify(requests[1].body)).toContain("apple apple")
      expect(JSON.stringify(requests[1].body)).not.toContain("banana")
      const last = JSON.stringify(requests[2].body)
      expect(last).toContain("SUMMARY: the user talked about apples")
      expect(last).toContain("banana banana")
      expect(last).not.toContain("apple apple")
    }))

  it.effect("an input that cannot fit even after compaction fails its turn with the reason", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, { contextWindow: 1600, maxOutputTokens: 200 })
      const agent = yield* rt.launch()
      const input = yield* rt.send(agent.id, Array.from({ length: 2000 }, () => "cherry").join(" "))
      yield* rt.idle(agent.id)
      const events = yield* rt.events(agent.id)
      const failed = events.find((event) => event.event_kind === "turn" && event.turn_status === "failed")
      expect(failed).toMatchObject({ turn_id: input.event.turn_id })
      expect((failed as { error: string }).error).toContain("context window")
      expect((yield* provider.requests).filter((r) => r.body?.model === rt.slug)).toHaveLength(0)
    }))

  it.effect("compaction of a history that is itself too large: its items are cut to fit the window, and the next turn goes on", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const contextWindow = 1600
      const rt = yield* runtimeProject(provider, { contextWindow, maxOutputTokens: 200 })
      yield* provider.script([
        Reply.text("noted apples"),
        Reply.text("SUMMARY: apples"),
        Reply.text("SUMMARY: apples, and a long list of cherries"),
        Reply.text("hello again")
      ], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "apples")
      yield* rt.idle(agent.id)
      // Far larger than the window: its turn fails, and it stays in the history.
      const oversized = yield* rt.send(agent.id, `first cherry ${"cherry ".repeat(5000)}last cherry`)
      yield* rt.idle(agent.id)
      const third = yield* rt.send(agent.id, "hi")
      yield* rt.idle(agent.id)
      const events = yield* rt.events(agent.id)
      const ends = events.filter((event) => event.event_kind === "turn" && event.turn_status !== "started")
      expect(ends.map((event) => [event.turn_id, (event as { turn_status: string }).turn_status])).toEqual([
        [events[0].turn_id, "completed"],
        [oversized.event.turn_id, "failed"],
        [third.event.turn_id, "completed"]
      ])
      const requests = (yield* provider.requests).filter((r) => r.body?.model === rt.slug)
      expect(requests).toHaveLength(4)
      // Every request fits the window (4 characters a token, the estimate's rule, wire JSON included).
      for (const request of requests) expect(JSON.stringify(request.body).length).toBeLessThan(contextWindow * 4)
      const summary = JSON.stringify(requests[2].body)
      expect(summary).toContain("first cherry")
      expect(summary).toContain("last cherry")
      expect(summary).toContain("characters left out here")
      expect(JSON.stringify(requests[3].body)).toContain("SUMMARY: apples, and a long list of cherries")
    }))

  it.effect("a model whose grant to the project was revoked is not called: the turn fails saying how to grant it again", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.text("first answer")], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "hello")
      yield* rt.idle(agent.id)
      const modelPath = { orgID: rt.org.id, modelID: rt.model.id }
      const [grant] = (yield* rt.client.models.listGrants({ params: modelPath, query: {} })).data
      yield* rt.client.models.removeGrant({ params: { ...modelPath, grantID: grant.id } })
      const second = yield* rt.send(agent.id, "hello again")
      yield* rt.idle(agent.id)
      const failed = (yield* rt.events(agent.id)).find((event) =>
        event.event_kind === "turn" && event.turn_id === second.event.turn_id && event.turn_status === "failed"
      )
      expect((failed as { error: string }).error).toContain(`is no longer granted to project ${rt.project.id}`)
      expect((yield* provider.requests).filter((r) => r.body?.model === rt.slug)).toHaveLength(1)
    }))

  it.effect("each call uses the model's current revision, its provider config as it is now and the key's latest value", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const agent = yield* rt.launch()
      yield* provider.script([Reply.text("first")], { model: rt.slug })
      yield* rt.send(agent.id, "one")
      yield* rt.idle(agent.id)

      const renamedSlug = yield* changeModel(rt, provider)
      yield* provider.script([Reply.text("second")], { model: renamedSlug })
      yield* rt.send(agent.id, "two")
      yield* rt.idle(agent.id)

      yield* expectCallsBeforeAndAfter(provider, rt.slug, renamedSlug)
      const ends = (yield* rt.events(agent.id)).filter((event) => event.event_kind === "turn" && event.turn_status !== "started")
      expect(ends.map((event) => (event as { turn_status: string }).turn_status)).toEqual(["completed", "completed"])
    }))

  it.effect("the call after a tool call's result uses the model as it is once the result came, not as the turn began", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const agent = yield* rt.launch()
      yield* provider.script([Reply.toolCall("lookup", { query: "weather" })], { model: rt.slug })
      yield* rt.send(agent.id, "one")
      yield* rt.waiting(agent.id)

      const renamedSlug = yield* changeModel(rt, provider)
      yield* provider.script([Reply.text("sunny")], { model: renamedSlug })
      const [call] = yield* rt.toolCalls(agent.id)
      yield* rt.client.toolCalls.submitResult({
        params: { ...rt.projectPath, agentID: agent.id, toolCallID: call.id },
        payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "Sunny" }] }
      })
      yield* rt.idle(agent.id)

      yield* expectCallsBeforeAndAfter(provider, rt.slug, renamedSlug)
      expect(turnStatuses(yield* rt.events(agent.id))).toEqual(["started", "completed"])
    }))
})

/** Renames the project's model, moves its provider config to `localhost` and rotates its key: the new slug. */
const changeModel = (rt: RuntimeProject, provider: ScriptedProviderShape) =>
  Effect.gen(function*() {
    const renamedSlug = `${rt.slug}-next`
    yield* rt.client.models.update({ params: { orgID: rt.org.id, modelID: rt.model.id }, payload: { provider_model_slug: renamedSlug } })
    const overLocalhost = provider.baseUrl(rt.format).replace("127.0.0.1", "localhost")
    yield* rt.client.modelProviderConfigs.update({
      params: { orgID: rt.org.id, modelProviderConfigID: rt.model.provider_config_id },
      payload: { base_url: overLocalhost }
    })
    const [secret] = (yield* rt.client.secrets.list({ params: { orgID: rt.org.id }, query: {} })).data
    yield* rt.client.secrets.rotate({ params: { orgID: rt.org.id, secretID: secret.id }, payload: { value: Redacted.make("sk-rotated") } })
    return renamedSlug
  })

/** The call under `before` went with the first key to 127.0.0.1, the call under `after` with the rotated one to localhost. */
const expectCallsBeforeAndAfter = (provider: ScriptedProviderShape, before: string, after: string) =>
  Effect.map(provider.requests, (requests) => {
    const first = requests.find((r) => r.body?.model === before)!
    const second = requests.find((r) => r.body?.model === after)!
    expect(first.headers).toMatchObject({ authorization: "Bearer sk-scripted-key", host: expect.stringMatching(/^127\.0\.0\.1:/) })
    expect(second.headers).toMatchObject({ authorization: "Bearer sk-rotated", host: expect.stringMatching(/^localhost:/) })
  })
