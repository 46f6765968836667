/**
 * The model adapters against the scripted provider over real HTTP on loopback: for each wire
 * format, streamed and not, a two-step tool-using exchange and what was sent (tools, cache
 * controls per retention, conversation key, reasoning, output cap, history with tool results);
 * retries (429 honouring retry-after, dropped connections, 500 until the attempts run out) and
 * interruption aborting the HTTP request.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from "../../src/services/runtime/model/AnthropicMessages.ts"
import { ConversationItems } from "../../src/services/runtime/model/ConversationItems.ts"
import { ModelClient, ModelRetryPolicy } from "../../src/services/runtime/model/ModelClient.ts"
import type { ConversationItem, ModelEvent, ModelRequest, ModelResponse } from "../../src/services/runtime/model/ModelMessages.ts"
import { ModelProviderError } from "../../src/services/runtime/model/ModelMessages.ts"
import type { RecordedRequest } from "../support/ScriptedProvider.ts"
import { TestModelClient } from "./RuntimeLayer.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"

const formats: ReadonlyArray<ApiFormat> = ["openai-responses", "openai-chat-completions", "anthropic-messages"]
const modes = ["streaming", "non-streaming"] as const
type Mode = typeof modes[number]

const INSTRUCTION = "You are a weather assistant."
const QUESTION = "What is the weather in Paris?"
const WEATHER_TOOL = {
  name: "get_weather",
  description: "Current weather of a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
}

const newModel = () => `model-${randomBytes(6).toString("hex")}`

const requestFor = (
  format: ApiFormat,
  model: string,
  conversation: ReadonlyArray<ConversationItem>,
  overrides: Partial<ModelRequest> = {}
) =>
  Effect.map(ScriptedProvider, (provider): ModelRequest => ({
    apiFormat: format,
    baseUrl: provider.baseUrl(format),
    apiKey: Redacted.make("sk-test-key"),
    model,
    instruction: INSTRUCTION,
    conversation: ConversationItems.of(conversation),
    tools: [WEATHER_TOOL],
    maxOutputTokens: 4000,
    reasoningEffort: "high",
    cacheRetention: "short",
    conversationKey: "agt_conversation",
    ...overrides
  }))

const call = (mode: Mode, request: ModelRequest) =>
  Effect.flatMap(ModelClient, (client) => mode === "streaming" ? client.respond(request) : client.generate(request))

const sentBy = (model: string) =>
  Effect.map(
    Effect.flatMap(ScriptedProvider, (provider) => provider.requests),
    (all) => all.filter((request) => request.body?.model === model)
  )

const fastRetries = Layer.succeed(ModelRetryPolicy, {
  maxAttempts: 3,
  initialDelay: Duration.millis(10),
  maxDelay: Duration.millis(50),
  maxRetryAfter: Duration.seconds(60)
})

/** What each format must have sent for the two steps of the weather exchange. */
const expectFirstRequest = (format: ApiFormat, sent: RecordedRequest, mode: Mode) => {
  const body = sent.body!
  expect(body.stream).toBe(mode === "streaming")
  switch (format) {
    case "openai-responses":
      expect(sent.path).toBe("/openai/v1/responses")
      expect(sent.headers.authorization).toBe("Bearer sk-test-key")
      expect(body.instructions).toBe(INSTRUCTION)
      expect(body.input).toEqual([{ role: "user", content: [{ type: "input_text", text: QUESTION }] }])
      expect(body.tools).toEqual([{
        type: "function",
        name: WEATHER_TOOL.name,
        description: WEATHER_TOOL.description,
        parameters: WEATHER_TOOL.input_schema,
        strict: false
      }])
      expect(body.max_output_tokens).toBe(4000)
      expect(body.reasoning).toEqual({ effort: "high", summary: "auto" })
      expect(body.include).toEqual(["reasoning.encrypted_content"])
      expect(body.store).toBe(false)
      expect(body.prompt_cache_key).toBe("agt_conversation")
      expect(body.prompt_cache_retention).toBeUndefined()
      break
    case "openai-chat-completions":
      expect(sent.path).toBe("/openai/v1/chat/completions")
      expect(sent.headers.authorization).toBe("Bearer sk-test-key")
      expect(body.messages).toEqual([{ role: "system", content: INSTRUCTION }, { role: "user", content: QUESTION }])
      expect(body.tools).toEqual([{
        type: "function",
        function: { name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.input_schema }
      }])
      expect(body.max_completion_tokens).toBe(4000)
      expect(body.reasoning_effort).toBe("high")
      expect(body.prompt_cache_key).toBe("agt_conversation")
      expect(body.stream_options).toEqual(mode === "streaming" ? { include_usage: true } : undefined)
      break
    case "anthropic-messages":
      expect(sent.path).toBe("/anthropic/v1/messages")
      expect(sent.headers["x-api-key"]).toBe("sk-test-key")
      expect(sent.headers["anthropic-version"]).toBe("2023-06-01")
      expect(sent.headers.authorization).toBeUndefined()
      expect(body.system).toEqual([{ type: "text", text: INSTRUCTION, cache_control: { type: "ephemeral" } }])
      expect(body.tools).toEqual([{ ...WEATHER_TOOL, cache_control: { type: "ephemeral" } }])
      expect(body.messages).toEqual([{
        role: "user",
        content: [{ type: "text", text: QUESTION, cache_control: { type: "ephemeral" } }]
      }])
      expect(body.max_tokens).toBe(4000)
      // high effort (16384) capped to leave 1024 tokens of the 4000 for the answer
      expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2976 })
      break
  }
}

const expectSecondRequest = (format: ApiFormat, sent: RecordedRequest, callId: string) => {
  const body = sent.body!
  switch (format) {
    case "openai-responses":
      expect(body.input).toEqual([
        { role: "user", content: [{ type: "input_text", text: QUESTION }] },
        {
          type: "reasoning",
          summary: [{ type: "summary_text", text: "The weather tool knows." }],
          encrypted_content: `enc_${Buffer.from("The weather tool knows.").toString("base64")}`
        },
        { type: "function_call", call_id: callId, name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) },
        { type: "function_call_output", call_id: callId, output: "18°C, sunny" }
      ])
      break
    case "openai-chat-completions":
      expect(body.messages).toEqual([
        { role: "system", content: INSTRUCTION },
        { role: "user", content: QUESTION },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: callId, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) } }]
        },
        { role: "tool", tool_call_id: callId, content: "18°C, sunny" }
      ])
      break
    case "anthropic-messages": {
      expect(body.messages).toEqual([
        { role: "user", content: [{ type: "text", text: QUESTION }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "The weather tool knows.", signature: expect.stringMatching(/^sig_/) },
            { type: "tool_use", id: callId, name: "get_weather", input: { city: "Paris" } }
          ]
        },
        {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: callId,
            content: [{ type: "text", text: "18°C, sunny" }],
            cache_control: { type: "ephemeral" }
          }]
        }
      ])
      break
    }
  }
}

const TestLayer = Layer.mergeAll(TestModelClient, ScriptedProvider.layer, fastRetries)

layer(TestLayer, { timeout: "30 seconds", excludeTestServices: true })("ModelClient", (it) => {
  for (const format of formats) {
    describe(format, () => {
      for (const mode of modes) {
        it.effect(`${mode}: a two-step tool-using exchange`, () =>
          Effect.gen(function*() {
            const provider = yield* ScriptedProvider
            const model = newModel()
            yield* provider.script([
              Reply.answer(
                [{ type: "reasoning", text: "The weather tool knows." }, { type: "tool_call", name: "get_weather", input: { city: "Paris" } }],
                { usage: { input_tokens: 120, output_tokens: 30, cache_read_tokens: 100, cache_write_tokens: 0 } }
              ),
              Reply.text("It is 18°C and sunny in Paris.", { usage: { input_tokens: 180, output_tokens: 12 } })
            ], { model })

            const question: ConversationItem = { type: "user_message", content: [{ type: "text", text: QUESTION }] }
            const first: ModelResponse = yield* call(mode, yield* requestFor(format, model, [question]))
            expect(first.stop_reason).toBe("tool_calls")
            const toolCall = first.output.find((item) => item.type === "tool_call")
            expect(toolCall).toMatchObject({ type: "tool_call", name: "get_weather", input: { city: "Paris" } })
            expect(first.output[0]).toMatchObject({ type: "assistant_reasoning", summary: "The weather tool knows." })
            const cacheRead = 100
            // anthropic counts cached input apart from the rest; the others include it in the input
            expect(first.usage).toEqual({
              input_tokens: format === "anthropic-messages" ? 120 + cacheRead : 120,
              output_tokens: 30,
              cache_read_tokens: cacheRead,
              cache_write_tokens: 0
            })
            if (toolCall?.type !== "tool_call") return yield* Effect.die(new Error("no tool call"))

            const second = yield* call(
              mode,
              yield* requestFor(format, model, [
                question,
                ...first.output,
                { type: "tool_result", call_id: toolCall.call_id, outcome: "succeeded", content: [{ type: "text", text: "18°C, sunny" }] }
              ])
            )
            expect(second).toEqual({
              output: [{ type: "assistant_text", text: "It is 18°C and sunny in Paris." }],
              usage: { input_tokens: 180, output_tokens: 12, cache_read_tokens: 0, cache_write_tokens: 0 },
              stop_reason: "end_turn"
            })

            const sent = yield* sentBy(model)
            expect(sent).toHaveLength(2)
            expectFirstRequest(format, sent[0], mode)
            expectSecondRequest(format, sent[1], toolCall.call_id)
          }))
      }

      it.effect("streams text in deltas, then usage, then done", () =>
        Effect.gen(function*() {
          const provider = yield* ScriptedProvider
          const model = newModel()
          const text = "A long answer that arrives in several pieces."
          yield* provider.script([Reply.text(text)], { model })
          const client = yield* ModelClient
          const events: Array<ModelEvent> = []
          yield* client.respond(
            yield* requestFor(format, model, [{ type: "user_message", content: [{ type: "text", text: "Talk." }] }]),
            (received) => events.push(...received)
          )
          const deltas = events.flatMap((event) => event.type === "text_delta" ? [event.text] : [])
          expect(deltas.length).toBeGreaterThan(1)
          expect(deltas.join("")).toBe(text)
          expect(events[events.length - 1]).toEqual({ type: "done", stop_reason: "end_turn" })
          expect(events.some((event) => event.type === "usage")).toBe(true)
        }))

      it.effect("a long answer that piles up while its observer holds up the reading arrives whole", () =>
        Effect.gen(function*() {
          const provider = yield* ScriptedProvider
          const model = newModel()
          // About 20,000 streamed events, 2 MiB or more on the wire in every format: more than the client holds unread before it pauses the socket.
          const text = Array.from({ length: 20_000 }, (_, i) => `word${i % 10} `).join("")
          yield* provider.script([Reply.text(text)], { model })
          const client = yield* ModelClient
          let observed = 0
          const response = yield* client.respond(
            yield* requestFor(format, model, [{ type: "user_message", content: [{ type: "text", text: "Talk at length." }] }]),
            // The first read's observer holds up the thread (an observer runs synchronously) while the rest arrives.
            () => {
              if (observed++ > 0) return
              const until = Date.now() + 300
              while (Date.now() < until) {
                // busy
              }
            }
          )
          expect(response.output).toEqual([{ type: "assistant_text", text }])
          expect(response.stop_reason).toBe("end_turn")
        }))

      it.effect("cache retention none / short / long, and no reasoning or output cap when unset", () =>
        Effect.gen(function*() {
          const provider = yield* ScriptedProvider
          const model = newModel()
          yield* provider.script([Reply.text("one"), Reply.text("two"), Reply.text("three")], { model })
          const conversation: ReadonlyArray<ConversationItem> = [
            { type: "user_message", content: [{ type: "text", text: "Hello" }] }
          ]
          for (const cacheRetention of ["none", "short", "long"] as const) {
            yield* call("streaming", yield* requestFor(format, model, conversation, {
              cacheRetention,
              maxOutputTokens: undefined,
              reasoningEffort: undefined
            }))
          }
          const [none, short, long] = (yield* sentBy(model)).map((request) => request.body!)
          switch (format) {
            case "openai-responses":
            case "openai-chat-completions":
              expect(none.prompt_cache_key).toBeUndefined()
              expect(none.prompt_cache_retention).toBeUndefined()
              expect(short.prompt_cache_key).toBe("agt_conversation")
              expect(short.prompt_cache_retention).toBeUndefined()
              expect(long.prompt_cache_key).toBe("agt_conversation")
              expect(long.prompt_cache_retention).toBe("24h")
              for (const body of [none, short, long]) {
                expect(body.reasoning).toBeUndefined()
                expect(body.reasoning_effort).toBeUndefined()
                expect(body.include).toBeUndefined()
                expect(body.max_output_tokens).toBeUndefined()
                expect(body.max_completion_tokens).toBeUndefined()
              }
              break
            case "anthropic-messages":
              expect(JSON.stringify(none)).not.toContain("cache_control")
              for (const [body, control] of [[short, { type: "ephemeral" }], [long, { type: "ephemeral", ttl: "1h" }]] as const) {
                expect(body.system[0].cache_control).toEqual(control)
                expect(body.tools[0].cache_control).toEqual(control)
                expect(body.messages[0].content[0].cache_control).toEqual(control)
              }
              for (const body of [none, short, long]) {
                expect(body.thinking).toBeUndefined()
                expect(body.max_tokens).toBe(DEFAULT_ANTHROPIC_MAX_TOKENS)
              }
              break
          }
        }))

      for (const mode of modes) {
        it.effect(`${mode}: a 429 is retried after its retry-after, then succeeds`, () =>
          Effect.gen(function*() {
            const provider = yield* ScriptedProvider
            const model = newModel()
            yield* provider.script([Reply.error(429, "Rate limit reached, try again in 1s", { retry_after: "1" }), Reply.text("ok")], {
              model
            })
            const started = Date.now()
            const response = yield* call(mode, yield* requestFor(format, model, [
              { type: "user_message", content: [{ type: "text", text: "Hi" }] }
            ])).pipe(
              // the backoff alone (10 ms) would have retried at once: waiting 1 s means retry-after was honoured
              Effect.provideService(ModelRetryPolicy, {
                maxAttempts: 3,
                initialDelay: Duration.millis(10),
                maxDelay: Duration.millis(10),
                maxRetryAfter: Duration.seconds(60)
              })
            )
            expect(response.output).toEqual([{ type: "assistant_text", text: "ok" }])
            expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
            expect(yield* sentBy(model)).toHaveLength(2)
          }))

        it.effect(`${mode}: a 500 on every attempt fails with the provider's message`, () =>
          Effect.gen(function*() {
            const provider = yield* ScriptedProvider
            const model = newModel()
            const message = "The server had an error while processing your request."
            yield* provider.script([Reply.error(500, message), Reply.error(502, message), Reply.error(503, message)], { model })
            const error = yield* Effect.flip(call(mode, yield* requestFor(format, model, [
              { type: "user_message", content: [{ type: "text", text: "Hi" }] }
            ])))
            expect(error).toBeInstanceOf(ModelProviderError)
            expect(error).toMatchObject({ status: 503, message })
            expect(yield* sentBy(model)).toHaveLength(3)
          }))
      }

      it.effect("an error event inside the stream fails the call with the provider's message", () =>
        Effect.gen(function*() {
          const provider = yield* ScriptedProvider
          const model = newModel()
          const message = "Overloaded"
          yield* provider.script([Reply.streamError([{ type: "text", text: "Half an ans" }], message)], { model })
          const client = yield* ModelClient
          const request = yield* requestFor(format, model, [{ type: "user_message", content: [{ type: "text", text: "Hi" }] }])
          const received: Array<string> = []
          const error = yield* Effect.flip(
            client.respond(request, (events) =>
              events.forEach((event) => event.type === "text_delta" && received.push(event.text)))
          )
          expect(received.join("")).toBe("Half an ans")
          expect(error).toMatchObject({ _tag: "ModelProviderError", status: null, message })
          expect(yield* sentBy(model)).toHaveLength(1)
        }))

      it.effect("an API key an HTTP header cannot carry fails the call without calling the provider", () =>
        Effect.gen(function*() {
          const model = newModel()
          for (const apiKey of ["sk-line\nbreak", "sk-\u0000", "sk-\u20ac"]) {
            const request = yield* requestFor(format, model, [{ type: "user_message", content: [{ type: "text", text: "Hi" }] }], {
              apiKey: Redacted.make(apiKey)
            })
            for (const mode of modes) {
              const error = yield* Effect.flip(call(mode, request))
              expect(error).toMatchObject({ _tag: "ModelProviderError", status: null, notCalled: true })
              expect(error.message).toContain("holds a character an HTTP header cannot carry")
            }
          }
          expect(yield* sentBy(model)).toHaveLength(0)
        }))

      it.effect("a dropped connection is retried; a 400 is not", () =>
        Effect.gen(function*() {
          const provider = yield* ScriptedProvider
          const model = newModel()
          yield* provider.script([
            Reply.drop(),
            Reply.text("after the drop"),
            Reply.error(400, "Invalid value for 'model'.")
          ], { model })
          const request = yield* requestFor(format, model, [{ type: "user_message", content: [{ type: "text", text: "Hi" }] }])
          const response = yield* call("streaming", request)
          expect(response.output).toEqual([{ type: "assistant_text", text: "after the drop" }])
          const error = yield* Effect.flip(call("non-streaming", request))
          expect(error).toMatchObject({ _tag: "ModelProviderError", status: 400, message: "Invalid value for 'model'." })
          expect(yield* sentBy(model)).toHaveLength(3)
        }))

      for (const mode of modes) {
        it.effect(`${mode}: interrupting the call aborts the HTTP request`, () =>
          Effect.gen(function*() {
            const provider = yield* ScriptedProvider
            const model = newModel()
            yield* provider.script([Reply.hang()], { model })
            const fiber = yield* Effect.forkChild(call(mode, yield* requestFor(format, model, [
              { type: "user_message", content: [{ type: "text", text: "Hi" }] }
            ])))
            yield* Effect.flatMap(sentBy(model), (sent) => sent.length === 1 ? Effect.void : Effect.fail("waiting")).pipe(
              Effect.retry(Schedule.spaced("5 millis"))
            )
            yield* Fiber.interrupt(fiber)
            const aborted = yield* Effect.flatMap(sentBy(model), (sent) =>
              sent[0].aborted ? Effect.succeed(true) : Effect.fail("still open")).pipe(
                Effect.retry(Schedule.spaced("5 millis")),
                Effect.timeout("5 seconds")
              )
            expect(aborted).toBe(true)
          }))
      }
    })
  }
})
