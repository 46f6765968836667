/**
 * Live output on the events stream: while a slow-streaming scripted model answers, the stream
 * sends `text_delta` (and `reasoning_summary_delta`) events without `id:` before the stored
 * `model_output`, those the server read together joined into one; resuming with Last-Event-ID
 * replays stored events only; the typed client's `streamAgentEvents` yields both kinds decoded.
 */
import { expect } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { streamAgentEvents } from "../../src/api/Client.ts"
import { pieces } from "../../src/demo/wire/ModelAnswer.ts"
import type { OutputDelta } from "../../src/domain/runtime/OutputDeltas.ts"
import { openEventStream, type OpenStream, type ServerSentEvent } from "../support/EventStreamClient.ts"
import { contiguousOffsets } from "../support/OutputDeltas.ts"
import { eventually } from "../support/Polling.ts"
import { type RuntimeProject, runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

/** With a character outside the BMP: offsets count code points, not UTF-16 units. */
const ANSWER = "The quick brown 🦊 jumps over the lazy dog"

/** Waits until the stream has sent a frame of `kind`; returns every frame so far. */
const until = (stream: OpenStream, kind: string) =>
  Effect.map(
    eventually(Effect.sync(() => stream.frames()), (frames) => frames.some((frame) => frame.event === kind), `a ${kind} frame`),
    (frames) => frames
  )

/** The path of an agent's event stream. */
const streamPath = (project: RuntimeProject, agentId: string) =>
  `/v1/orgs/${project.org.id}/projects/${project.project.id}/agents/${agentId}/events/stream`

const deltasOf = (frames: ReadonlyArray<ServerSentEvent>, kind = "text_delta") =>
  frames.filter((frame) => frame.event === kind).map((frame) => JSON.parse(frame.data!) as OutputDelta)

describeRuntime()("live output", (it) => {
  it.effect("text deltas without id come before the stored model_output; a resume replays no deltas", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const project = yield* runtimeProject(provider)
      yield* provider.script([Reply.slowText(ANSWER, 60)], { model: project.slug })
      const agent = yield* project.launch()
      const path = streamPath(project, agent.id)
      const stream = yield* openEventStream(path, project.owner.token)
      yield* project.send(agent.id, "Tell me slowly")
      const frames = yield* until(stream, "model_output")
      yield* project.idle(agent.id)

      const outputAt = frames.findIndex((frame) => frame.event === "model_output")
      const deltaFrames = frames.filter((frame) => frame.event === "text_delta")
      expect(deltaFrames.length).toBeGreaterThanOrEqual(2)
      expect(deltaFrames.every((frame) => frame.id === undefined)).toBe(true)
      expect(frames.findLastIndex((frame) => frame.event === "text_delta")).toBeLessThan(outputAt)
      const deltas = deltasOf(frames)
      const turnId = JSON.parse(frames[outputAt].data!).turn_id
      expect(deltas.every((delta) => delta.agent_id === agent.id && delta.turn_id === turnId && delta.step === 1 && delta.kind === "text"))
        .toBe(true)
      expect(deltas.map((delta) => delta.delta).join("")).toBe(ANSWER)
      expect(deltas.map((delta) => delta.offset)).toEqual(contiguousOffsets(deltas))
      // They arrived while the model answered, not all at once with the output.
      expect(frames[outputAt].receivedAt - deltaFrames[0].receivedAt).toBeGreaterThanOrEqual(200)
      yield* stream.drop

      // Resuming from the agent_input: the stored events after it, no delta of that past turn.
      const input = frames.find((frame) => frame.event === "agent_input")!
      const resumed = yield* openEventStream(path, project.owner.token, { "last-event-id": input.id! })
      const replayed = yield* until(resumed, "turn")
      yield* eventually(Effect.sync(() => resumed.frames()), (all) => all.filter((frame) => frame.event === "turn").length === 2, "both turn events")
      expect(resumed.frames().filter((frame) => frame.id === undefined && frame.event !== undefined)).toEqual([])
      expect(replayed.find((frame) => frame.event === "model_output")?.id).toBe(frames[outputAt].id)
      yield* resumed.drop
    }))

  it.effect("an answer that arrives at once goes out in fewer deltas than the provider sent", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const project = yield* runtimeProject(provider)
      // Streamed in pieces of 12 characters, written all at once: what the server reads together goes out joined.
      const answer = Array.from({ length: 10 }, () => ANSWER).join(". ")
      yield* provider.script([Reply.text(answer)], { model: project.slug })
      const agent = yield* project.launch()
      const stream = yield* openEventStream(streamPath(project, agent.id), project.owner.token)
      yield* project.send(agent.id, "Tell me at once")
      const frames = yield* until(stream, "model_output")
      const deltas = deltasOf(frames)
      expect(deltas.map((delta) => delta.delta).join("")).toBe(answer)
      expect(deltas.map((delta) => delta.offset)).toEqual(contiguousOffsets(deltas))
      // A read may end between two writes of the provider, but not between most of them.
      expect(deltas.length).toBeLessThan(pieces(answer).length / 2)
      yield* stream.drop
    }))

  it.effect("reasoning summary deltas come as reasoning_summary_delta, before the text's", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const project = yield* runtimeProject(provider, { supportsReasoning: true, modelLines: ["reasoning: { effort: low }"] })
      yield* provider.script([
        Reply.answer([{ type: "reasoning", text: "Weighing two options" }, { type: "text", text: "Option one" }], { word_delay_ms: 30 })
      ], { model: project.slug })
      const agent = yield* project.launch()
      const stream = yield* openEventStream(streamPath(project, agent.id), project.owner.token)
      yield* project.send(agent.id, "Decide")
      const frames = yield* until(stream, "model_output")
      const reasoning = deltasOf(frames, "reasoning_summary_delta")
      const text = deltasOf(frames)
      expect(reasoning.map((delta) => delta.delta).join("")).toBe("Weighing two options")
      expect(text.map((delta) => delta.delta).join("")).toBe("Option one")
      // Each kind has its own offsets, from 0.
      expect(reasoning.map((delta) => delta.offset)).toEqual(contiguousOffsets(reasoning))
      expect(text.map((delta) => delta.offset)).toEqual(contiguousOffsets(text))
      expect(frames.findIndex((frame) => frame.event === "reasoning_summary_delta"))
        .toBeLessThan(frames.findIndex((frame) => frame.event === "text_delta"))
      yield* stream.drop
    }))

  it.effect("the typed client's streamAgentEvents yields the deltas, then the stored model_output", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const project = yield* runtimeProject(provider, { format: "openai-chat-completions" })
      yield* provider.script([Reply.slowText(ANSWER, 40)], { model: project.slug })
      const agent = yield* project.launch()
      const items = yield* streamAgentEvents({ token: project.owner.token }, { ...project.projectPath, agentID: agent.id }).pipe(
        Stream.takeUntil((item) => item.type === "event" && item.event.event_kind === "model_output"),
        Stream.runCollect,
        Effect.forkChild
      )
      yield* project.send(agent.id, "Go")
      const collected = yield* Fiber.join(items)
      const kinds = collected.map((item) => item.type === "event" ? item.event.event_kind : item.delta.kind)
      expect(kinds.slice(0, 2)).toEqual(["agent_input", "turn"])
      expect(kinds[kinds.length - 1]).toBe("model_output")
      const deltas = collected.flatMap((item) => item.type === "delta" ? [item.delta.delta] : [])
      expect(deltas.length).toBeGreaterThanOrEqual(2)
      expect(deltas.join("")).toBe(ANSWER)
    }))
})
