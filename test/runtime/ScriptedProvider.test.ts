/**
 * The scripted provider's own rules that other tests and the benchmarks rely on: replies queued
 * per model slug, the default answer once the queues are empty (one reply, or one chosen by the
 * call's body), a vendor-shaped 500 when nothing is scripted, and the promise-based start with
 * recording off.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Redacted } from "effect"
import { ConversationItems } from "../../src/services/runtime/model/ConversationItems.ts"
import { ModelClient, ModelRetryPolicy } from "../../src/services/runtime/model/ModelClient.ts"
import type { ModelRequest } from "../../src/services/runtime/model/ModelMessages.ts"
import { TestModelClient } from "./RuntimeLayer.ts"
import { Reply, ScriptedProvider, startScriptedProvider } from "../support/ScriptedProvider.ts"

const request = (baseUrl: string, model: string, apiKey = "sk-test"): ModelRequest => ({
  apiFormat: "openai-chat-completions",
  baseUrl,
  apiKey: Redacted.make(apiKey),
  model,
  instruction: "Be brief.",
  conversation: ConversationItems.of([{ type: "user_message", content: [{ type: "text", text: "Hi" }] }]),
  tools: [],
  maxOutputTokens: undefined,
  reasoningEffort: undefined,
  cacheRetention: "none",
  conversationKey: "agt_test"
})

const noRetries = Layer.succeed(ModelRetryPolicy, {
  maxAttempts: 1,
  initialDelay: Duration.zero,
  maxDelay: Duration.zero,
  maxRetryAfter: Duration.zero
})

const textOf = (response: { output: ReadonlyArray<{ type: string; text?: string }> }) =>
  response.output.map((item) => item.text ?? "").join("")

describe("ScriptedProvider", () => {
  it.live("serves each model its own queue, then the shared one, then the default answer (or one chosen by the call), else a 500", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const client = yield* ModelClient
      const baseUrl = provider.baseUrl("openai-chat-completions")
      yield* provider.script([Reply.text("for a")], { model: "a" })
      yield* provider.script([Reply.text("shared")])
      expect(textOf(yield* client.generate(request(baseUrl, "b")))).toBe("shared")
      expect(textOf(yield* client.generate(request(baseUrl, "a")))).toBe("for a")
      const unscripted = yield* Effect.flip(client.generate(request(baseUrl, "a")))
      expect(unscripted).toMatchObject({ status: 500, message: "The scripted provider has no reply left for model a" })
      yield* provider.answerByDefault(Reply.text("default"))
      expect(textOf(yield* client.generate(request(baseUrl, "c")))).toBe("default")
      yield* provider.answerByDefault((body) => Reply.text(`chosen for ${body.model}`))
      expect(textOf(yield* client.generate(request(baseUrl, "d")))).toBe("chosen for d")
      expect((yield* provider.requests).map((sent) => sent.body?.model)).toEqual(["b", "a", "a", "c", "d"])
    }).pipe(Effect.provide(Layer.mergeAll(TestModelClient, ScriptedProvider.layer, noRetries))))

  it.live("started outside Effect with recording off, it answers and keeps no requests", () =>
    Effect.gen(function*() {
      const { close, provider } = yield* Effect.promise(() => startScriptedProvider({ record: false }))
      yield* Effect.addFinalizer(() => Effect.promise(close))
      yield* provider.answerByDefault(Reply.text("at once"))
      const client = yield* ModelClient
      const response = yield* client.respond(request(provider.baseUrl("openai-chat-completions"), "bench"))
      expect(textOf(response)).toBe("at once")
      expect(yield* provider.requests).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(TestModelClient)))
})
