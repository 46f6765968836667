/**
 * What begins as the server starts stopping (src/layers/http/ClosedAtShutdown.ts): an event stream
 * whose answer began just before the stop but whose body starts after it, and a daemon whose
 * hello comes after it, are ended at once rather than held open until the drain's grace runs out.
 * The race is a matter of microseconds over HTTP (test/http/Startup.test.ts stops a real server
 * with both open), so the two services are driven directly, each built fresh in the app's context.
 */
import { expect } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { MachineId } from "../../src/domain/shared/Ids.ts"
import { CurrentPrincipal } from "../../src/domain/tenancy/Principal.ts"
import type { LocalConnection } from "../../src/services/machines/MachineHub.ts"
import { MachineHub } from "../../src/services/machines/MachineHub.ts"
import { StreamAccess } from "../../src/services/runtime/StreamAccess.ts"
import { ApiKeys } from "../../src/services/tenancy/ApiKeys.ts"
import { agentProject } from "../support/AgentProject.ts"
import { describeApp, newId, testConfig } from "../support/TestApp.ts"

/** The service of `layer`, built fresh (not the app's instance) with the app's services, for the test's scope. */
const fresh = <I, S, E, R>(key: Context.Key<I, S>, layer: Layer.Layer<I, E, R>) =>
  Effect.map(Layer.build(Layer.fresh(layer)), (context) => Context.get(context, key))

/** A connection of a new machine id that records the reasons it is closed with. */
const recordingConnection = (closed: Array<string>) =>
  Effect.map(newId(MachineId), (machineId): LocalConnection => ({
    machineId,
    connectionId: "connection",
    credentialId: "credential",
    close: (reason) => Effect.sync(() => void closed.push(reason)),
    ended: Effect.void
  }))

describeApp()("closed at shutdown", (it) => {
  it.effect("a stream that starts after the stop began ends at once, told server_shutdown", () =>
    Effect.gen(function*() {
      const { launch, owner, projectPath } = yield* agentProject()
      const agent = yield* launch()
      const principal = yield* Effect.flatMap(ApiKeys, (keys) => keys.authenticate(owner.token))
      const access = yield* fresh(StreamAccess, StreamAccess.layer.pipe(Layer.provide(testConfig())))
      yield* access.closeAtShutdown
      const closed = yield* access.lost(projectPath.orgID, projectPath.projectID, agent.id).pipe(
        Effect.provideService(CurrentPrincipal, principal),
        Effect.timeout("2 seconds")
      )
      expect(closed.reason).toBe("server_shutdown")
    }).pipe(Effect.scoped))

  it.effect("a daemon connection added after the stop began is refused, for its session to close it", () =>
    Effect.gen(function*() {
      const hub = yield* fresh(MachineHub, MachineHub.layer.pipe(Layer.provide(testConfig())))
      const earlier: Array<string> = []
      expect(yield* hub.add(yield* recordingConnection(earlier))).toBe(true)
      yield* hub.closeAll("server_shutdown", "the server is stopping")
      expect(earlier).toEqual(["server_shutdown"])
      expect(yield* hub.add(yield* recordingConnection([]))).toBe(false)
    }).pipe(Effect.scoped))

  it.effect("closing every daemon connection waits for their sessions to end", () =>
    Effect.gen(function*() {
      const hub = yield* fresh(MachineHub, MachineHub.layer.pipe(Layer.provide(testConfig())))
      const sessionEnded = yield* Deferred.make<void>()
      const connection = yield* recordingConnection([])
      yield* hub.add({ ...connection, ended: Deferred.await(sessionEnded) })
      const closing = yield* Effect.forkChild(hub.closeAll("server_shutdown", "the server is stopping"))
      yield* Effect.sleep("50 millis")
      expect(closing.pollUnsafe()).toBeUndefined()
      yield* Deferred.succeed(sessionEnded, undefined)
      yield* Fiber.join(closing)
    }).pipe(Effect.scoped))
})
