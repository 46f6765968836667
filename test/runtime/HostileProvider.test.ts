/**
 * A broken or hostile model provider (docs/model-adapters.md, "Bounds"): what one model call may
 * take from it. The real server over a real database, the provider a real HTTP server
 * (test/support/HostileReplies.ts), with short timeouts: 1 s for an answer's head and for a
 * pause of its body, 2 s for a whole call in the last block.
 *
 * Before: a stream of text that never ended grew the server's heap until it died; a call waited
 * for ever on a provider that sent nothing, or whose body never ended after its final event; a
 * second answer in the stream was folded into the first; an error body of hundreds of megabytes
 * was read whole and its message stored whole; `retry-after-ms: 0` made the attempts follow each
 * other at once.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { AgentId } from "../../src/domain/shared/Ids.ts"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"
import { ConversationItems } from "../../src/services/runtime/model/ConversationItems.ts"
import {
  MAX_ERROR_MESSAGE_CHARACTERS,
  MAX_MODEL_ANSWER_BYTES,
  MAX_MODEL_RESPONSE_BYTES,
  MAX_TOOL_CALLS_PER_ANSWER
} from "../../src/services/runtime/model/ModelCallLimits.ts"
import { ModelClient } from "../../src/services/runtime/model/ModelClient.ts"
import { Hostile, type Written } from "../support/HostileReplies.ts"
import { eventually } from "../support/Polling.ts"
import { type RuntimeProject, runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { TestAppLive, testConfig } from "../support/TestApp.ts"
import { fastRetries } from "./RuntimeLayer.ts"

const FORMATS: ReadonlyArray<ApiFormat> = ["openai-responses", "openai-chat-completions", "anthropic-messages"]
/** The formats whose adapter holds a tool call until it is whole (openai-responses sends each call whole). */
const HELD_TOOL_CALLS: ReadonlyArray<ApiFormat> = ["openai-chat-completions", "anthropic-messages"]
const MIB = 1024 * 1024

const timeouts = (call: Duration.Input, head: Duration.Input) => ({
  modelHeadTimeout: Duration.fromInputUnsafe(head),
  modelIdleTimeout: Duration.seconds(1),
  modelCallTimeout: Duration.fromInputUnsafe(call)
})

const appWith = (call: Duration.Input, head: Duration.Input = "1 second") =>
  layer(Layer.mergeAll(TestAppLive(timeouts(call, head)), ScriptedProvider.layer).pipe(Layer.provide(fastRetries)), {
    timeout: "120 seconds",
    excludeTestServices: true
  })

interface TurnRow {
  readonly status: string
  readonly error: string | null
}

/** The agent's turns and events as stored (each event's size). */
const stored = (agentId: AgentId) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const turns = yield* sql<TurnRow>`SELECT status, error FROM turns WHERE agent_id = ${agentId} ORDER BY id`
    const events = yield* sql<{ readonly event_kind: string; readonly bytes: number }>`
      SELECT event_kind, octet_length(data::text) AS bytes FROM agent_events WHERE agent_id = ${agentId} ORDER BY sequence`
    return { turns, events: events.map((event) => ({ kind: event.event_kind, bytes: Number(event.bytes) })) }
  }).pipe(Effect.orDie)

/** Sends one input to a new agent and waits until its turn ended; the agent, its turns and events. */
const oneTurn = (rt: RuntimeProject, wait: `${number} seconds` = "60 seconds") =>
  Effect.gen(function*() {
    const agent = yield* rt.launch()
    yield* rt.send(agent.id, "Go")
    const idle = yield* rt.idle(agent.id, wait)
    return { agent: idle, ...(yield* stored(agent.id)), output: (yield* rt.events(agent.id)) as ReadonlyArray<Record<string, any>> }
  })

/** The requests of the project's model. */
const callsOf = (rt: RuntimeProject) =>
  Effect.map(Effect.flatMap(ScriptedProvider, (provider) => provider.requests), (all) => all.filter((request) => request.body?.model === rt.slug))

/** Waits until every call of the project's model saw its connection closed; those calls. */
const allClosed = (rt: RuntimeProject) =>
  eventually(callsOf(rt), (calls) => calls.every((call) => call.closedAt !== undefined), "the connections closed", "10 seconds")

const failedWith = (turns: ReadonlyArray<TurnRow>) => {
  expect(turns.map((turn) => turn.status)).toEqual(["failed"])
  return turns[0].error ?? ""
}

appWith("30 seconds")("a hostile model provider", (it) => {
  it.effect("a stream of text that never ends: read past 8 MiB of answer, the connection closed, the turn fails naming the limit, nothing stored", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const written: Written = { bytes: 0 }
      yield* provider.script([Hostile.endless("text", 64 * 1024, written)], { model: rt.slug })
      const { agent, events, turns } = yield* oneTurn(rt)
      expect(agent.status).toBe("idle")
      expect(failedWith(turns)).toMatch(
        /^The model provider failed: The model provider at 127\.0\.0\.1:\d+ sent an answer larger than 8 MiB \(its text, reasoning and tool calls together\); the platform stopped reading it and closed the connection$/
      )
      expect(events.map((event) => event.kind)).not.toContain("model_output")
      expect(Math.max(...events.map((event) => event.bytes))).toBeLessThan(4096)
      const [call] = yield* allClosed(rt)
      expect(call.aborted).toBe(true)
      // What the provider got out before it saw the close: the limit and what the sockets' buffers held.
      expect(written.bytes).toBeGreaterThan(MAX_MODEL_ANSWER_BYTES)
      expect(written.bytes).toBeLessThan(MAX_MODEL_ANSWER_BYTES + 16 * MIB)
    }), { timeout: 120_000 })

  it.effect("an endless stream of events the platform ignores: read up to 64 MiB, the connection closed, the turn fails naming the limit", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, { format: "anthropic-messages" })
      const written: Written = { bytes: 0 }
      yield* provider.script([Hostile.endless("ignored", 4096, written)], { model: rt.slug })
      const { agent, events, turns } = yield* oneTurn(rt)
      expect(agent.status).toBe("idle")
      expect(failedWith(turns)).toMatch(
        /^The model provider failed: The model provider at 127\.0\.0\.1:\d+ sent more than 64 MiB for one answer; the platform stopped reading it and closed the connection$/
      )
      expect(Math.max(...events.map((event) => event.bytes))).toBeLessThan(4096)
      const [call] = yield* allClosed(rt)
      expect(call.aborted).toBe(true)
      expect(written.bytes).toBeGreaterThan(MAX_MODEL_RESPONSE_BYTES)
      expect(written.bytes).toBeLessThan(MAX_MODEL_RESPONSE_BYTES + 16 * MIB)
    }), { timeout: 120_000 })

  it.effect("a whole answer of 48 MiB of text in 1 MiB events: stopped past 8 MiB, the connection closed before its end, nothing stored", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      for (const format of FORMATS) {
        const rt = yield* runtimeProject(provider, { format })
        const written: Written = { bytes: 0 }
        yield* provider.script([Hostile.large({ char: "z", length: 48 * MIB }, MIB, written)], { model: rt.slug })
        const { events, turns } = yield* oneTurn(rt)
        expect(failedWith(turns), format).toMatch(
          /^The model provider failed: The model provider at 127\.0\.0\.1:\d+ sent an answer larger than 8 MiB \(its text, reasoning and tool calls together\); the platform stopped reading it and closed the connection$/
        )
        expect(events.map((event) => event.kind), format).not.toContain("model_output")
        const [call] = yield* allClosed(rt)
        expect(call.aborted, format).toBe(true)
        expect(written.bytes, format).toBeLessThan(MAX_MODEL_ANSWER_BYTES + 16 * MIB)
      }
    }), { timeout: 120_000 })

  // The adapters of these two formats hold a tool call's arguments until the call is whole (chat
  // completions: the stream's end; anthropic: the block's stop). Before they counted in the
  // answer's bound, 40 MiB of arguments were read whole and failed only then.
  it.effect("one tool call of 40 MiB of arguments (chat completions, anthropic): stopped past 8 MiB, the connection closed before its end, nothing stored", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      for (const format of HELD_TOOL_CALLS) {
        const rt = yield* runtimeProject(provider, { format })
        const written: Written = { bytes: 0 }
        yield* provider.script([Hostile.toolCalls({ count: 1, length: 40 * MIB, deltaBytes: 64 * 1024 }, written)], { model: rt.slug })
        const { events, turns } = yield* oneTurn(rt)
        expect(failedWith(turns), format).toMatch(
          /^The model provider failed: The model provider at 127\.0\.0\.1:\d+ sent an answer larger than 8 MiB \(its text, reasoning and tool calls together\); the platform stopped reading it and closed the connection$/
        )
        expect(events.map((event) => event.kind), format).toEqual(["agent_input", "turn", "turn"])
        expect(Math.max(...events.map((event) => event.bytes)), format).toBeLessThan(4096)
        const [call] = yield* allClosed(rt)
        expect(call.aborted, format).toBe(true)
        expect(written.bytes, format).toBeGreaterThan(MAX_MODEL_ANSWER_BYTES)
        expect(written.bytes, format).toBeLessThan(MAX_MODEL_ANSWER_BYTES + 16 * MIB)
      }
    }), { timeout: 120_000 })

  // Before, every call was read (31 and 53 MB) and folded, and the answer of 100,000 calls failed
  // its turn only once whole.
  it.effect(`100,000 tool calls in one answer (chat completions, anthropic): stopped past ${MAX_TOOL_CALLS_PER_ANSWER}, the connection closed before its end, nothing stored`, () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      for (const format of HELD_TOOL_CALLS) {
        const rt = yield* runtimeProject(provider, { format })
        const written: Written = { bytes: 0 }
        yield* provider.script([Hostile.toolCalls({ count: 100_000, length: 1, deltaBytes: 1 }, written)], { model: rt.slug })
        const { events, turns } = yield* oneTurn(rt)
        expect(failedWith(turns), format).toMatch(
          /^The model provider failed: The model provider at 127\.0\.0\.1:\d+ sent an answer of more than 256 tool calls \(the most one answer may make\); the platform stopped reading it and closed the connection$/
        )
        expect(events.map((event) => event.kind), format).toEqual(["agent_input", "turn", "turn"])
        const [call] = yield* allClosed(rt)
        expect(call.aborted, format).toBe(true)
        expect(written.bytes, format).toBeLessThan(16 * MIB)
      }
    }), { timeout: 120_000 })

  it.effect("no answer's head: each attempt closed after the head timeout and retried, then the turn fails saying so", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.hang(), Reply.hang(), Reply.hang()], { model: rt.slug })
      const { agent, turns } = yield* oneTurn(rt)
      expect(agent.status).toBe("idle")
      expect(failedWith(turns)).toMatch(
        /^The model provider failed: The model provider at 127\.0\.0\.1:\d+ sent no answer within 1 second \(AGENT_PLATFORM_MODEL_HEAD_TIMEOUT_SECONDS\); the connection was closed$/
      )
      const calls = yield* allClosed(rt)
      expect(calls.map((call) => call.aborted)).toEqual([true, true, true])
      for (const call of calls) expect(call.closedAt! - call.receivedAt).toBeGreaterThanOrEqual(900)
    }), { timeout: 60_000 })

  it.effect("the head, then nothing: closed after the idle timeout, the turn fails saying so (not retried: the answer had begun)", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Hostile.stallAfterHead()], { model: rt.slug })
      const { turns } = yield* oneTurn(rt)
      expect(failedWith(turns)).toMatch(
        /^The model provider failed: The model provider at 127\.0\.0\.1:\d+ sent nothing for 1 second in the middle of its answer \(AGENT_PLATFORM_MODEL_IDLE_TIMEOUT_SECONDS\); the connection was closed$/
      )
      const calls = yield* allClosed(rt)
      expect(calls.map((call) => call.aborted)).toEqual([true])
    }), { timeout: 60_000 })

  it.effect("a whole (non-streamed) answer whose body stalls after its head: the call fails once, not tried again", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const model = `stall-${Date.now()}`
      yield* provider.script([Hostile.stallAfterHead(), Reply.text("too late")], { model })
      const error = yield* Effect.flatMap(ModelClient, (client) =>
        Effect.flip(client.generate({
          apiFormat: "openai-responses",
          baseUrl: provider.baseUrl("openai-responses"),
          apiKey: Redacted.make("sk-test"),
          model,
          instruction: "Answer.",
          conversation: ConversationItems.of([{ type: "user_message", content: [{ type: "text", text: "Hi" }] }]),
          tools: [],
          maxOutputTokens: undefined,
          reasoningEffort: undefined,
          cacheRetention: "none",
          conversationKey: "k"
        }))).pipe(Effect.provide(ModelClient.layer.pipe(Layer.provide(testConfig(timeouts("30 seconds", "1 second"))))))
      expect(error.message).toMatch(/sent nothing for 1 second in the middle of its answer/)
      const calls = (yield* provider.requests).filter((request) => request.body?.model === model)
      expect(calls).toHaveLength(1)
    }), { timeout: 60_000 })

  it.effect("a whole answer whose body never ends: the turn completes with it at its final event, the connection closed after (three formats)", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      for (const format of FORMATS) {
        const rt = yield* runtimeProject(provider, { format })
        yield* provider.script([Hostile.answers([[{ type: "text", text: "one" }]], { end: false })], { model: rt.slug })
        const { output, turns } = yield* oneTurn(rt)
        expect(turns, format).toEqual([{ status: "completed", error: null }])
        expect(output.find((event) => event.event_kind === "model_output")?.content_blocks, format).toEqual([{ type: "text", text: "one" }])
        const [call] = yield* allClosed(rt)
        expect(call.aborted, format).toBe(true)
      }
    }), { timeout: 60_000 })

  it.effect("a whole answer whose body ends 200 ms after its final event: the answer taken at once, the connection kept for the next call", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([
        Hostile.answers([[{ type: "text", text: "one" }]], { end: 200 }),
        Reply.text("two")
      ], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "First")
      yield* rt.idle(agent.id, "30 seconds")
      // The first call's body ends while the connection is still read (AFTER_END_MILLIS).
      yield* eventually(callsOf(rt), (calls) => calls[0]?.closedAt !== undefined, "the first answer's end", "10 seconds")
      yield* rt.send(agent.id, "Second")
      yield* rt.idle(agent.id, "30 seconds")
      const { turns } = yield* stored(agent.id)
      expect(turns.map((turn) => turn.status)).toEqual(["completed", "completed"])
      const calls = yield* callsOf(rt)
      expect(calls.map((call) => call.aborted)).toEqual([false, false])
      expect(calls[1].remotePort).toBe(calls[0].remotePort)
    }), { timeout: 60_000 })

  it.effect("two whole answers in one stream: the first is the answer, what follows its final event is not read (three formats)", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      for (const format of FORMATS) {
        const rt = yield* runtimeProject(provider, { format })
        yield* provider.script([
          Hostile.answers([[{ type: "text", text: "one" }], [{ type: "text", text: "two" }]], { end: true })
        ], { model: rt.slug })
        const { output, turns } = yield* oneTurn(rt)
        expect(turns, format).toEqual([{ status: "completed", error: null }])
        expect(output.filter((event) => event.event_kind === "model_output").map((event) => event.content_blocks), format)
          .toEqual([[{ type: "text", text: "one" }]])
      }
    }), { timeout: 60_000 })

  it.effect("a 500 whose body drips and never ends: each attempt's body waited for the idle timeout in all, its connection closed, retried; the turn fails with the status", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      // A space every 300 ms: never idle for the idle timeout, so only the error body's own bound ends it.
      const dripping = () => Hostile.errorNeverEnds(500, 300)
      yield* provider.script([dripping(), dripping(), dripping()], { model: rt.slug })
      const { turns } = yield* oneTurn(rt)
      expect(failedWith(turns)).toBe(
        "The model provider failed with HTTP 500: The model provider answered HTTP 500, and its body did not come within 1 second"
      )
      const calls = yield* allClosed(rt)
      expect(calls.map((call) => call.aborted)).toEqual([true, true, true])
    }), { timeout: 60_000 })

  it.effect("a 500 with a 200 MB body: 64 KiB of each attempt's read, its connection closed; the turn's error cut to 4 KiB with a marker", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const written: Written = { bytes: 0 }
      const huge = () => Hostile.hugeError(500, 200 * 1000 * 1000, false, written)
      yield* provider.script([huge(), huge(), huge()], { model: rt.slug })
      const { events, turns } = yield* oneTurn(rt)
      const error = failedWith(turns)
      expect(error).toBe(
        `The model provider failed with HTTP 500: ${"y".repeat(MAX_ERROR_MESSAGE_CHARACTERS)} [… cut: ${
          64 * 1024 - MAX_ERROR_MESSAGE_CHARACTERS
        } more characters left out; the body, longer than 64 KiB, was not read whole]`
      )
      expect(Math.max(...events.map((event) => event.bytes))).toBeLessThan(8 * 1024)
      const calls = yield* allClosed(rt)
      expect(calls.map((call) => call.aborted)).toEqual([true, true, true])
      expect(written.bytes).toBeLessThan(3 * 8 * MIB)
    }), { timeout: 60_000 })

  it.effect("a 400 whose JSON error message is 100 MB, then one of 60 KB: neither stored whole, each cut to 4 KiB with a marker", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const written: Written = { bytes: 0 }
      yield* provider.script([Hostile.hugeError(400, 100 * 1000 * 1000, true, written), Reply.error(400, "m".repeat(60_000))], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "First")
      yield* rt.idle(agent.id, "30 seconds")
      yield* rt.send(agent.id, "Second")
      yield* rt.idle(agent.id, "30 seconds")
      const { events, turns } = yield* stored(agent.id)
      expect(turns.map((turn) => turn.status)).toEqual(["failed", "failed"])
      const prefix = '{"error":{"message":"'
      expect(turns[0].error).toBe(
        `The model provider failed with HTTP 400: ${prefix}${"y".repeat(MAX_ERROR_MESSAGE_CHARACTERS - prefix.length)} [… cut: ${
          64 * 1024 - MAX_ERROR_MESSAGE_CHARACTERS
        } more characters left out; the body, longer than 64 KiB, was not read whole]`
      )
      expect(turns[1].error).toBe(
        `The model provider failed with HTTP 400: ${"m".repeat(MAX_ERROR_MESSAGE_CHARACTERS)} [… cut: ${
          60_000 - MAX_ERROR_MESSAGE_CHARACTERS
        } more characters left out]`
      )
      expect(Math.max(...events.map((event) => event.bytes))).toBeLessThan(8 * 1024)
      const [huge] = yield* allClosed(rt)
      expect(huge.aborted).toBe(true)
      expect(written.bytes).toBeLessThan(8 * MIB)
    }), { timeout: 60_000 })

  it.effect("`retry-after-ms: 0`: the attempts still wait the first step of the backoff between them", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const busy = () => Reply.error(429, "slow down", { headers: { "retry-after-ms": "0" } })
      yield* provider.script([busy(), busy(), busy()], { model: rt.slug })
      const { turns } = yield* oneTurn(rt)
      expect(failedWith(turns)).toBe("The model provider failed with HTTP 429: slow down")
      const calls = yield* callsOf(rt)
      expect(calls).toHaveLength(3)
      // fastRetries: 20 ms the first step.
      expect(calls[1].receivedAt - calls[0].receivedAt).toBeGreaterThanOrEqual(20)
      expect(calls[2].receivedAt - calls[1].receivedAt).toBeGreaterThanOrEqual(20)
    }), { timeout: 60_000 })
})

appWith("2 seconds")("a model provider that drips its answer", (it) => {
  it.effect("a delta every 200 ms (never idle for 1 s), never ending: stopped at the call's timeout, the connection closed, the turn fails saying so", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const written: Written = { bytes: 0 }
      yield* provider.script([Hostile.drip(200, written)], { model: rt.slug })
      const started = Date.now()
      const { agent, events, turns } = yield* oneTurn(rt, "30 seconds")
      expect(agent.status).toBe("idle")
      expect(failedWith(turns)).toMatch(
        /^The model provider failed: The model provider at 127\.0\.0\.1:\d+ took more than 2 seconds to answer \(AGENT_PLATFORM_MODEL_CALL_TIMEOUT_SECONDS\); the connection was closed$/
      )
      expect(events.map((event) => event.kind)).not.toContain("model_output")
      const [call] = yield* allClosed(rt)
      expect(call.aborted).toBe(true)
      expect(call.closedAt! - started).toBeLessThan(10_000)
    }), { timeout: 60_000 })
})

// The scripted provider makes the whole answer of 125,000 deltas before it sends its head: over
// the 1 s head timeout of the other tests on a loaded machine, which retried the call.
appWith("60 seconds", "30 seconds")("a model provider's long answer", (it) => {
  it.effect("a long answer as a model writes one (1.5 M characters in 125,000 deltas, 31.5 MiB of events): stored whole", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const text = "word ".repeat(300_000)
      yield* provider.script([Reply.text(text)], { model: rt.slug })
      const { events, output, turns } = yield* oneTurn(rt)
      expect(turns).toEqual([{ status: "completed", error: null }])
      expect(output.find((event) => event.event_kind === "model_output")?.content_blocks).toEqual([{ type: "text", text }])
      expect(events.find((event) => event.kind === "model_output")!.bytes).toBeLessThan(MAX_MODEL_ANSWER_BYTES)
    }), { timeout: 120_000 })
})
