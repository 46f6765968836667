/**
 * A model's output holding what the database cannot store (docs/runtime.md, "Text the platform
 * receives"): a NUL (`\u0000` in the provider's JSON) or an unpaired surrogate (`\ud800`) in its
 * text, reasoning, a tool call's name or input, or the provider's error message; a tool call's input
 * nested 5,000 levels deep (kept to 64 levels of the response, a marker in place of the rest; the
 * scripted provider cannot send much deeper, test/machines/UnstorableDaemonText.test.ts sends a
 * daemon's result 100,000 deep).
 * The turn goes on
 * as with any other text, each such character stored as U+FFFD; a pair the provider's stream cut
 * between two deltas is kept whole. Without the replacement the recording failed and the turn
 * ended on an internal error (a failed turn's message: the turn's end could not be stored).
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import type { ApiFormat } from "../../src/domain/configuration/ModelProviderConfigs.ts"
import { DEEPER_THAN_LIMIT } from "../../src/services/shared/StorableJson.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

/** Arrays nested `depth` deep around "leaf". */
const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + '"leaf"' + "]".repeat(depth))

/** How many one-element arrays wrap the leaf of `value`, and the leaf. */
const levelsAbove = (value: unknown) => {
  let levels = 0
  while (Array.isArray(value)) {
    value = value[0]
    levels++
  }
  return { levels, leaf: value }
}

const FORMATS: ReadonlyArray<ApiFormat> = ["openai-responses", "openai-chat-completions", "anthropic-messages"]

/** U+FFFD, what takes the place of each character that cannot be stored. */
const R = "\ufffd"

/**
 * Eleven characters, then a pair: the scripted provider streams text in pieces of 12 UTF-16 code
 * units, so the pair is cut between two deltas (each written in the provider's JSON with an
 * unpaired surrogate escape); joined again, it is a character like any other.
 */
const CUT_PAIR = "0123456789a😀"

interface Output {
  readonly event_kind: string
  readonly content_blocks?: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly turn_status?: string
  readonly error?: string
}

describeRuntime("120 seconds")("model output the database cannot store", (it) => {
  it.effect("a NUL, then unpaired surrogates, in a reply's text: each turn completes, its output stored with U+FFFD (three formats)", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      for (const format of FORMATS) {
        const rt = yield* runtimeProject(provider, { format })
        yield* provider.script([
          Reply.text("before\u0000after"),
          Reply.text(`${CUT_PAIR} high\ud800 low\udc00 reversed\udc00\ud800.`)
        ], { model: rt.slug })
        const agent = yield* rt.launch()
        yield* rt.send(agent.id, "Say something odd")
        yield* rt.idle(agent.id, "30 seconds")
        yield* rt.send(agent.id, "Say something odder")
        yield* rt.idle(agent.id, "30 seconds")
        const events = (yield* rt.events(agent.id)) as ReadonlyArray<Output>
        const outputs = events.filter((event) => event.event_kind === "model_output").map((event) => event.content_blocks)
        expect(outputs, format).toEqual([
          [{ type: "text", text: `before${R}after` }],
          [{ type: "text", text: `${CUT_PAIR} high${R} low${R} reversed${R}${R}.` }]
        ])
        const ends = events.filter((event) => event.event_kind === "turn" && event.turn_status !== "started")
        expect(ends.map((event) => event.turn_status), format).toEqual(["completed", "completed"])
        // The next call's history holds the text as stored.
        const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
        expect(JSON.stringify(requests[1].body), format).toContain(`before${R}after`)
      }
    }), { timeout: 120_000 })

  it.effect("reasoning, a tool call's name and input: stored with U+FFFD, the custom call answered, the turn completes", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, { supportsReasoning: true })
      yield* provider.script([
        Reply.answer([
          { type: "reasoning", text: "weighing\u0000it" },
          {
            type: "tool_call",
            name: "lookup",
            input: { query: "a\u0000b", "key\ud800": ["\udc00", { deep: "c\u0000" }], fine: "😀", nested: nested(5_000) }
          },
          { type: "tool_call", name: "look\u0000up", input: {} }
        ]),
        Reply.text("Done.")
      ], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "Look it up")
      yield* rt.waiting(agent.id)
      const calls = yield* rt.toolCalls(agent.id)
      const lookup = calls.find((call) => call.name === "lookup")!
      expect(lookup).toMatchObject({
        state: "ready",
        input: { query: `a${R}b`, [`key${R}`]: [R, { deep: `c${R}` }], fine: "😀" }
      })
      // The input is level 4 of the response (response, output, item, input): 60 levels below it
      // are kept, the next is the marker.
      expect(levelsAbove((lookup.input as { nested: unknown }).nested)).toEqual({ levels: 60, leaf: DEEPER_THAN_LIMIT })
      // A tool the config does not offer: its name stored as the model wrote it, but storable; failed at once.
      expect(calls.find((call) => call.name !== "lookup")).toMatchObject({ name: `look${R}up`, state: "completed", outcome: "failed" })
      yield* rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(agent.id), toolCallID: lookup.id },
        payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "found" }] }
      })
      yield* rt.idle(agent.id, "30 seconds")
      const events = (yield* rt.events(agent.id)) as ReadonlyArray<Output & { tool_name?: string; tool_input?: unknown }>
      expect(events.find((event) => event.event_kind === "model_output")?.content_blocks).toEqual([
        expect.objectContaining({ type: "reasoning_summary", text: `weighing${R}it` })
      ])
      expect(events.filter((event) => event.event_kind === "tool_call").map((event) => event.tool_name)).toEqual([
        "lookup",
        `look${R}up`
      ])
      expect(events.find((event) => event.event_kind === "tool_call")?.tool_input).toEqual(lookup.input)
      expect(events.filter((event) => event.event_kind === "turn").map((event) => event.turn_status)).toEqual(["started", "completed"])
    }), { timeout: 60_000 })

  it.effect("a provider's error message holding a NUL or an unpaired surrogate: the turn fails with the provider's message, U+FFFD in it", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      for (const format of FORMATS) {
        const rt = yield* runtimeProject(provider, { format })
        yield* provider.script([
          Reply.error(400, "bad\u0000request \ud800"),
          Reply.streamError([{ type: "text", text: "partial" }], "broke\udc00off\u0000")
        ], { model: rt.slug })
        const agent = yield* rt.launch()
        yield* rt.send(agent.id, "First")
        yield* rt.idle(agent.id, "30 seconds")
        yield* rt.send(agent.id, "Second")
        yield* rt.idle(agent.id, "30 seconds")
        const failures = ((yield* rt.events(agent.id)) as ReadonlyArray<Output>)
          .filter((event) => event.event_kind === "turn" && event.turn_status === "failed")
          .map((event) => event.error)
        expect(failures, format).toEqual([
          `The model provider failed with HTTP 400: bad${R}request ${R}`,
          expect.stringContaining(`broke${R}off${R}`)
        ])
      }
    }), { timeout: 120_000 })
})
