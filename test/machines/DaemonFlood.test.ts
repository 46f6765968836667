/**
 * A daemon that misbehaves on its WebSocket (docs/machines.md, "A misbehaving daemon"), spoken
 * by hand: junk frames close the connection after MAX_UNDECODABLE_IN_A_ROW in a row; a flood of
 * results is stored a few at a time, each acknowledged once; a files-route request the server
 * gave up waiting for is not sent again.
 */
import { expect } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { MAX_UNDECODABLE_IN_A_ROW } from "../../src/services/machines/MachineSessions.ts"
import { handDaemon } from "../support/HandDaemon.ts"
import { eventually } from "../support/Polling.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "../runtime/RuntimeLayer.ts"

const junk = (count: number, send: (text: string) => Effect.Effect<void>) =>
  Effect.forEach(Array.from({ length: count }, (_, i) => `not json ${i}`), send, { discard: true })

describeRuntime("180 seconds")("a misbehaving daemon", (it) => {
  it.effect("messages that do not decode: a run shorter than the limit is ignored; a run of the limit closes with protocol_error", () =>
    Effect.gen(function*() {
      const rt = yield* runtimeProject(yield* ScriptedProvider)
      const daemon = yield* handDaemon(rt, "junk")
      const heartbeatAcks = () => daemon.frames.filter((frame) => frame.type === "heartbeat_ack").length
      yield* junk(MAX_UNDECODABLE_IN_A_ROW - 1, daemon.sendText)
      yield* daemon.send({ type: "heartbeat" })
      yield* junk(MAX_UNDECODABLE_IN_A_ROW - 1, daemon.sendText)
      yield* daemon.send({ type: "heartbeat" })
      yield* eventually(Effect.sync(heartbeatAcks), (acks) => acks === 2, "both heartbeats acknowledged", "15 seconds")
      expect(daemon.frames.filter((frame) => frame.type === "close")).toEqual([])

      yield* junk(MAX_UNDECODABLE_IN_A_ROW, daemon.sendText)
      const close = yield* eventually(
        Effect.sync(() => daemon.frames.find((frame) => frame.type === "close")),
        (frame) => frame !== undefined,
        "the close",
        "15 seconds"
      )
      expect(close).toMatchObject({ reason: "protocol_error" })
      yield* daemon.close
    }), { timeout: 60_000 })

  it.effect("a flood of results for unknown ids, sent at once: each is acknowledged, once", () =>
    Effect.gen(function*() {
      const rt = yield* runtimeProject(yield* ScriptedProvider)
      const daemon = yield* handDaemon(rt, "flood")
      const ids = Array.from({ length: 2000 }, (_, i) => `unknown-${i}`)
      yield* Effect.forEach(ids, (id) =>
        daemon.send({
          type: "result",
          request_id: id,
          outcome: "failed",
          error: { code: "internal_error", message: "x".repeat(1000) }
        }), { discard: true })
      const acknowledged = yield* eventually(daemon.acknowledged, (acked) => acked.length >= ids.length, "every ack", "60 seconds")
      expect([...acknowledged].sort()).toEqual([...ids].sort())
      yield* daemon.close
    }), { timeout: 90_000 })

  it.effect("a file read the daemon never answers: 503 after 60 s, and the request is not sent again after a reconnect", () =>
    Effect.gen(function*() {
      const rt = yield* runtimeProject(yield* ScriptedProvider)
      const daemon = yield* handDaemon(rt, "silent")
      const read = yield* Effect.forkChild(Effect.flip(
        rt.client.machines.readFile({ params: { orgID: rt.org.id, machineID: daemon.machineId }, query: { path: "/tmp/never.txt" } })
      ))
      const request = yield* daemon.requestFor("file.read")
      // Heartbeats keep the silent daemon connected while the route waits.
      const heartbeats = yield* Effect.forkChild(
        Effect.forever(Effect.andThen(daemon.send({ type: "heartbeat" }), Effect.sleep("5 seconds")))
      )
      const failure = yield* Fiber.join(read)
      yield* Fiber.interrupt(heartbeats)
      expect(failure).toMatchObject({ _tag: "ServiceUnavailable" })

      const again = yield* daemon.reconnect
      yield* again.send({ type: "heartbeat" })
      yield* eventually(Effect.sync(() => again.frames), (f) => f.some((frame) => frame.type === "heartbeat_ack"), "a heartbeat_ack", "15 seconds")
      // The mailbox was sent with the welcome, before the heartbeat's answer: no request in it.
      expect(again.frames.filter((frame) => frame.type === "request")).toEqual([])
      // The daemon's late answer is acknowledged and ignored.
      yield* again.send({ type: "result", request_id: request.request_id, outcome: "succeeded", output: {} })
      yield* eventually(again.acknowledged, (ids) => ids.includes(request.request_id), "the late result acknowledged", "15 seconds")
      yield* again.close
      yield* daemon.close
    }), { timeout: 120_000 })
})
