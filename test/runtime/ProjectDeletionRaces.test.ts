/**
 * Requests to an agent racing the deletion of its project, on Postgres (the embedded database runs
 * one statement at a time, so they cannot meet there): each is answered as it would be a moment
 * before or after the delete, and the delete is `204`, never `500` (docs/api-conventions.md, "A
 * resource deleted meanwhile"). The test's own transaction holds what makes the request and the
 * delete meet at the point of the race, then lets them go.
 */
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { lockWaits, waitedOn } from "../support/HeldAgent.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { outcomesAtOnce } from "../support/TestApp.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { runtimeProject, text, turnAwaitingLookup } from "../support/RuntimeProject.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

describeRuntime()("requests to an agent racing the deletion of its project", (it) => {
  it.effect.skipIf(usesEmbeddedDatabase)("an input recorded while the project is deleted: the input queued, then the project deleted; no deadlock", () =>
    Effect.gen(function*() {
      const { agent, rt } = yield* turnAwaitingLookup(yield* ScriptedProvider)
      const sql = yield* SqlClient.SqlClient
      const { deleting, sending } = yield* sql.withTransaction(Effect.gen(function*() {
        // An INSERT into the inputs waits until this transaction ends.
        yield* sql`LOCK TABLE agent_inputs IN SHARE ROW EXCLUSIVE MODE`
        // With a key, the input is recorded in a transaction that locks the agent first. Queued
        // behind the turn, it writes the agent's row twice (its timeline, its count of queued
        // inputs), and the second write checks the row's foreign keys: the project's row among them.
        const sending = yield* Effect.forkChild(rt.send(agent.id, "And then?", "then"))
        yield* waitedOn(sql, "the input's INSERT, its agent locked")
        const deleting = yield* Effect.forkChild(rt.client.projects.remove({ params: rt.projectPath }))
        yield* lockWaits(sql, 2, "the delete, for the agent the input holds")
        return { deleting, sending }
      })).pipe(Effect.orDie)
      expect((yield* Fiber.join(sending)).disposition).toBe("queued")
      yield* Fiber.join(deleting)
      expect((yield* Effect.flip(rt.agent(agent.id)))._tag).toBe("NotFound")
    }))

  it.effect.skipIf(usesEmbeddedDatabase)("a cancel and a withdrawal that wait for the agent while the project is deleted: 404 not_found", () =>
    Effect.gen(function*() {
      const { agent, rt } = yield* turnAwaitingLookup(yield* ScriptedProvider)
      const queued = yield* rt.send(agent.id, "And then?")
      const agentPath = rt.agentPath(agent.id)
      const sql = yield* SqlClient.SqlClient
      const { cancelling, deleting, withdrawing } = yield* sql.withTransaction(Effect.gen(function*() {
        // The agent's row, held until this transaction ends: the delete waits for it, and the
        // cancel and the withdrawal, having found the agent, wait behind the delete.
        yield* sql`SELECT id FROM agents WHERE id = ${agent.id} FOR UPDATE`
        const deleting = yield* Effect.forkChild(rt.client.projects.remove({ params: rt.projectPath }))
        yield* waitedOn(sql, "the delete, for the agent")
        const cancelling = yield* Effect.forkChild(
          Effect.flip(rt.client.agents.control({ params: agentPath, payload: { control_type: "cancel_current" } }))
        )
        const withdrawing = yield* Effect.forkChild(
          Effect.flip(rt.client.agents.withdrawInput({ params: { ...agentPath, inputID: queued.event.agent_input_id } }))
        )
        yield* lockWaits(sql, 3, "the cancel and the withdrawal, for the agent")
        return { cancelling, deleting, withdrawing }
      })).pipe(Effect.orDie)
      yield* Fiber.join(deleting)
      for (const refused of [yield* Fiber.join(cancelling), yield* Fiber.join(withdrawing)]) {
        expect(refused).toMatchObject({ _tag: "NotFound", error: `Agent ${agent.id} not found in project ${rt.project.id}` })
      }
    }))

  it.effect.skipIf(usesEmbeddedDatabase)("an agent launched while the delete waits for the project's agents: the launch waits for the delete, then 404", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const agent = yield* rt.launch()
      const sql = yield* SqlClient.SqlClient
      const { deleting, launching } = yield* sql.withTransaction(Effect.gen(function*() {
        // The project's agent, held until this transaction ends: the delete waits for it. An agent
        // launched meanwhile was missing from the agents it had locked, and its cascade then met
        // that agent unlocked: a transaction writing the new agent's row twice (an input queued
        // behind its first turn) waited for the project's row, the delete for it (deadlock, 500).
        yield* sql`SELECT id FROM agents WHERE id = ${agent.id} FOR UPDATE`
        const deleting = yield* Effect.forkChild(rt.client.projects.remove({ params: rt.projectPath }))
        yield* waitedOn(sql, "the delete, for the agent")
        const launching = yield* Effect.forkChild(Effect.flip(rt.client.agents.create({
          params: rt.projectPath,
          payload: { agent_config_id: rt.config.id, input: { content_blocks: text("Check the status") } }
        })))
        yield* lockWaits(sql, 2, "the launch, for the project the delete holds")
        return { deleting, launching }
      })).pipe(Effect.orDie)
      yield* Fiber.join(deleting)
      expect(yield* Fiber.join(launching)).toMatchObject({ _tag: "NotFound", error: `Project ${rt.project.id} not found` })
    }))

  it.effect.skipIf(usesEmbeddedDatabase)("launches sent with the deletion of their project: each 201 or 404, never 500", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      yield* provider.answerByDefault(Reply.text("Done."))
      for (let round = 0; round < 5; round++) {
        const rt = yield* runtimeProject(provider)
        // Half with a first input: such a launch reads its agent again once it has committed,
        // which the deletion may have taken by then (that read's "vanished" agent was a 500).
        const launches = Array.from({ length: 16 }, (_, index) =>
          Effect.delay(
            rt.client.agents.create({
              params: rt.projectPath,
              payload: { agent_config_id: rt.config.id, ...(index % 2 === 0 ? { input: { content_blocks: text("Hi") } } : {}) }
            }),
            `${index * 2} millis`
          ))
        const deleting = Effect.delay(rt.client.projects.remove({ params: rt.projectPath }), `${5 + round * 5} millis`)
        const [deleted, ...launched] = yield* outcomesAtOnce([deleting, ...launches])
        expect(deleted).toBe("succeeded")
        for (const outcome of launched) expect(["succeeded", "NotFound"]).toContain(outcome)
      }
    }))
})
