/**
 * Inputs, backlog, control and turns through the HTTP API, with the engine running turns against
 * the scripted provider: launch with an input, idempotent inputs (201 then 200; other body 409;
 * sent in parallel, still one 201 and the media stored once), inline media as media_ref, backlog
 * order, bound and withdrawal, cancel_current, turn reads.
 */
import { SqlClient } from "effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import type { AgentId } from "../../src/domain/shared/Ids.ts"
import { InputId } from "../../src/domain/shared/Ids.ts"
import { agentProject } from "../support/AgentProject.ts"
import { eventually } from "../support/Polling.ts"
import { getBytes } from "../support/RawHttp.ts"
import { Reply, ScriptedProvider, type ScriptedReply } from "../support/ScriptedProvider.ts"
import { expectFailure, ID_PATTERN, newId, TestAppLive } from "../support/TestApp.ts"

const artifactsOf = (agentId: AgentId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ count: string }>`SELECT count(*) FROM artifacts WHERE agent_id = ${agentId}`)
    .pipe(Effect.map((rows) => Number(rows[0].count)), Effect.orDie)

const text = (value: string) => ({ type: "text" as const, text: value })

/** A project whose model is the scripted provider under its own slug, scripted with `replies`. */
const scriptedProject = (replies: ReadonlyArray<ScriptedReply>) =>
  Effect.gen(function*() {
    const provider = yield* ScriptedProvider
    const slug = `model-${randomBytes(4).toString("hex")}`
    const format = "openai-chat-completions"
    const setup = yield* agentProject({ label: "Inputs", baseUrl: provider.baseUrl(format), format, slug })
    yield* provider.script(replies, { model: slug })
    return { ...setup, provider, client: setup.owner.client }
  })

const TestLive = Layer.merge(TestAppLive(), ScriptedProvider.layer)

it.layer(TestLive)("agent inputs", (it) => {
  it.effect("launch with an input: 201, the agent and the input's answer; the turn is readable", () =>
    Effect.gen(function*() {
      const { client, config, owner, projectPath } = yield* scriptedProject([
        Reply.text("Hello!", { usage: { input_tokens: 12, output_tokens: 3 } })
      ])
      const png = randomBytes(64)
      const [launched, response] = yield* client.agents.create({
        params: projectPath,
        payload: {
          agent_config_id: config.id,
          input: {
            content_blocks: [text("Hi"), { type: "media", media_type: "image/png", data: png.toString("base64") }]
          }
        },
        responseMode: "decoded-and-response"
      })
      expect(response.status).toBe(201)
      expect(launched.id).toMatch(ID_PATTERN("agt"))
      expect(launched.input?.disposition).toBe("started")
      const event = launched.input!.event
      expect(event).toMatchObject({
        event_kind: "agent_input",
        agent_id: launched.id,
        sequence: 1,
        is_opening_event: true,
        turn_sequence: 0,
        input_kind: "content",
        actor_id: null,
        input_idempotency_key: null
      })
      expect(launched.current_turn_id).toBe(event.turn_id)
      const [first, ref] = event.content_blocks
      expect(first).toEqual(text("Hi"))
      expect(ref).toMatchObject({ type: "media_ref", media_type: "image/png", size_bytes: 64 })
      const download = yield* getBytes(
        `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${launched.id}/artifacts/${
          (ref as { artifact_id: string }).artifact_id
        }`,
        owner.token
      )
      expect(download.status).toBe(200)
      expect(download.bytes.equals(png)).toBe(true)

      const agentPath = { ...projectPath, agentID: launched.id }
      const turns = yield* eventually(
        client.agents.listTurns({ params: agentPath, query: {} }),
        (page) => page.data[0]?.status === "completed",
        "the turn to complete"
      )
      const [turn] = turns.data
      expect(turn).toMatchObject({ id: event.turn_id, agent_id: launched.id, input_id: event.agent_input_id, error: null })
      expect(turn.model_calls).toBe(1)
      expect(turn.usage).toMatchObject({ input_tokens: 12, output_tokens: 3 })
      expect(turn.completed_at).toBeInstanceOf(Date)
      expect(turn.duration_ms).toBe(turn.completed_at!.getTime() - turn.started_at.getTime())
      expect(yield* client.agents.getTurn({ params: { ...agentPath, turnID: turn.id } })).toEqual(turn)
      const idle = yield* eventually(client.agents.get({ params: agentPath }), (agent) => agent.status === "idle", "idle")
      expect(idle.current_turn_id).toBeNull()
    }), { timeout: 60_000 })

  it.effect("idempotent inputs: same key and body is 200 with the same event; another body is 409", () =>
    Effect.gen(function*() {
      const { client, launch, projectPath } = yield* scriptedProject([Reply.text("one"), Reply.text("two")])
      const agent = yield* launch()
      const agentPath = { ...projectPath, agentID: agent.id }
      const actor = yield* client.actors.create({ params: projectPath, payload: { external_id: "user-1" } })
      const payload = {
        content_blocks: [
          text("Deploy please"),
          { type: "media" as const, media_type: "text/plain", data: Buffer.from("log").toString("base64") }
        ],
        input_idempotency_key: "req-1",
        actor_id: actor.id
      }
      const [first, created] = yield* client.agents.sendInput({ params: agentPath, payload, responseMode: "decoded-and-response" })
      expect(created.status).toBe(201)
      expect(first.event).toMatchObject({ actor_id: actor.id, input_idempotency_key: "req-1" })
      const artifacts = yield* artifactsOf(agent.id)
      expect(artifacts).toBe(1)

      const [again, replayed] = yield* client.agents.sendInput({ params: agentPath, payload, responseMode: "decoded-and-response" })
      expect(replayed.status).toBe(200)
      expect(again.event.id).toBe(first.event.id)
      expect(again.event.sequence).toBe(first.event.sequence)
      expect(again.disposition).toBe(first.disposition)
      expect(yield* artifactsOf(agent.id)).toBe(artifacts)

      const conflict = yield* expectFailure(
        client.agents.sendInput({ params: agentPath, payload: { ...payload, content_blocks: [text("Something else")] } })
      )
      expect(conflict._tag).toBe("IdempotencyKeyConflict")
      const otherActor = yield* expectFailure(
        client.agents.sendInput({ params: agentPath, payload: { ...payload, actor_id: undefined } })
      )
      expect(otherActor._tag).toBe("IdempotencyKeyConflict")

      const inputs = (yield* client.agents.listEvents({ params: agentPath, query: {} })).data.filter((event) =>
        event.event_kind === "agent_input"
      )
      expect(inputs.map((event) => event.id)).toEqual([first.event.id])
    }), { timeout: 60_000 })

  it.effect("idempotent inputs sent in parallel: one 201, the others 200 with the same event, the media stored once", () =>
    Effect.gen(function*() {
      const { client, launch, projectPath } = yield* scriptedProject([Reply.text("once")])
      const agent = yield* launch()
      const agentPath = { ...projectPath, agentID: agent.id }
      const payload = {
        content_blocks: [
          text("Deploy please"),
          { type: "media" as const, media_type: "text/plain", data: Buffer.from("the log").toString("base64") }
        ],
        input_idempotency_key: "parallel-1"
      }
      const sent = yield* Effect.all(
        Array.from({ length: 10 }, () =>
          client.agents.sendInput({ params: agentPath, payload, responseMode: "decoded-and-response" })),
        { concurrency: "unbounded" }
      )
      const statuses = sent.map(([, response]) => response.status).sort()
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201])
      const first = sent.find(([, response]) => response.status === 201)![0]
      for (const [accepted] of sent) {
        expect(accepted.event.id).toBe(first.event.id)
        expect(accepted.disposition).toBe(first.disposition)
      }
      expect(yield* artifactsOf(agent.id)).toBe(1)
      const inputs = (yield* client.agents.listEvents({ params: agentPath, query: {} })).data.filter((event) =>
        event.event_kind === "agent_input"
      )
      expect(inputs.map((event) => event.id)).toEqual([first.event.id])
    }), { timeout: 60_000 })

  it.effect("one key sent in parallel with two bodies: one 201, 200 for its body, 409 for the other; media stored once", () =>
    Effect.gen(function*() {
      const { client, launch, projectPath } = yield* scriptedProject([Reply.text("once")])
      const agent = yield* launch()
      const agentPath = { ...projectPath, agentID: agent.id }
      const withMedia = (label: string) => ({
        content_blocks: [{ type: "media" as const, media_type: "text/plain", data: Buffer.from(label).toString("base64") }],
        input_idempotency_key: "parallel-2"
      })
      const bodies = Array.from({ length: 10 }, (_, i) => withMedia(i % 2 === 0 ? "body a" : "body b"))
      const sent = yield* Effect.all(
        bodies.map((payload) =>
          Effect.result(client.agents.sendInput({ params: agentPath, payload, responseMode: "decoded-and-response" }))
        ),
        { concurrency: "unbounded" }
      )
      const created = sent.flatMap((result, i) =>
        result._tag === "Success" && result.success[1].status === 201 ? [{ i, accepted: result.success[0] }] : []
      )
      expect(created).toHaveLength(1)
      const winner = created[0]
      const sameBody = (i: number) => i % 2 === winner.i % 2
      sent.forEach((result, i) => {
        if (i === winner.i) return
        if (sameBody(i)) {
          expect(result._tag).toBe("Success")
          if (result._tag === "Success") {
            expect(result.success[1].status).toBe(200)
            expect(result.success[0].event.id).toBe(winner.accepted.event.id)
          }
        } else {
          expect(result._tag === "Failure" ? result.failure._tag : "Success").toBe("IdempotencyKeyConflict")
        }
      })
      expect(yield* artifactsOf(agent.id)).toBe(1)
      const inputs = (yield* client.agents.listEvents({ params: agentPath, query: {} })).data.filter((event) =>
        event.event_kind === "agent_input"
      )
      expect(inputs.map((event) => event.id)).toEqual([winner.accepted.event.id])
    }), { timeout: 60_000 })

  it.effect("backlog: queued oldest first, withdrawal, the bound of 100, cancel_current runs the next", () =>
    Effect.gen(function*() {
      const { client, launch, projectPath } = yield* scriptedProject([Reply.hang(), Reply.hang()])
      const agent = yield* launch()
      const agentPath = { ...projectPath, agentID: agent.id }
      const send = (value: string) => client.agents.sendInput({ params: agentPath, payload: { content_blocks: [text(value)] } })

      const running = yield* send("first")
      expect(running.disposition).toBe("started")
      const queued = [yield* send("second"), yield* send("third"), yield* send("fourth")]
      expect(queued.map((input) => input.disposition)).toEqual(["queued", "queued", "queued"])
      const backlog = yield* client.agents.listBacklog({ params: agentPath, query: {} })
      expect(backlog.data.map((input) => input.id)).toEqual(queued.map((input) => input.event.agent_input_id))
      expect(backlog.data[0]).toMatchObject({ status: "queued", content_blocks: [text("second")] })
      const page = yield* client.agents.listBacklog({ params: agentPath, query: { limit: 2 } })
      expect(page.has_more).toBe(true)
      expect(page.data.length).toBe(2)

      // Withdraw the middle one: 204, gone from the backlog; again: 409; the running input: 409; unknown: 404.
      const middle = queued[1].event.agent_input_id
      yield* client.agents.withdrawInput({ params: { ...agentPath, inputID: middle } })
      const after = yield* client.agents.listBacklog({ params: agentPath, query: {} })
      expect(after.data.map((input) => input.id)).toEqual([queued[0].event.agent_input_id, queued[2].event.agent_input_id])
      expect((yield* expectFailure(client.agents.withdrawInput({ params: { ...agentPath, inputID: middle } })))._tag).toBe(
        "StateTransitionConflict"
      )
      expect(
        (yield* expectFailure(client.agents.withdrawInput({ params: { ...agentPath, inputID: running.event.agent_input_id } })))
          ._tag
      ).toBe("StateTransitionConflict")
      expect((yield* expectFailure(client.agents.withdrawInput({ params: { ...agentPath, inputID: yield* newId(InputId) } })))._tag)
        .toBe("NotFound")

      // Fill the backlog to its bound: 2 queued now, 98 more, then one too many.
      for (let i = 0; i < 98; i++) yield* send(`filler ${i}`)
      const full = yield* expectFailure(send("one too many"))
      expect(full._tag).toBe("AgentBacklogFull")

      // Cancel the running turn: the control event comes back, and the oldest queued input starts.
      const control = yield* client.agents.control({ params: agentPath, payload: { control_type: "cancel_current" } })
      expect(control).toMatchObject({ event_kind: "control", control_type: "cancel_current", agent_id: agent.id })
      const next = yield* eventually(
        client.agents.get({ params: agentPath }),
        (current) => current.current_turn_id === queued[0].event.turn_id,
        "the next queued input's turn"
      )
      expect(next.status).not.toBe("idle")
      const firstTurn = yield* client.agents.getTurn({ params: { ...agentPath, turnID: running.event.turn_id! } })
      expect(firstTurn.status).toBe("cancelled")
      // Room again in the backlog.
      expect((yield* send("now it fits")).disposition).toBe("queued")

      // Leave nothing running for a later process on the same database: withdraw the backlog, cancel the turn.
      let rest = yield* client.agents.listBacklog({ params: agentPath, query: { limit: 100 } })
      while (rest.data.length > 0) {
        for (const input of rest.data) yield* client.agents.withdrawInput({ params: { ...agentPath, inputID: input.id } })
        rest = yield* client.agents.listBacklog({ params: agentPath, query: { limit: 100 } })
      }
      yield* client.agents.control({ params: agentPath, payload: { control_type: "cancel_current" } })
      yield* eventually(client.agents.get({ params: agentPath }), (current) => current.status === "idle", "the agent idle")
    }), { timeout: 120_000 })

  it.effect("cancel_current with nothing running is 409", () =>
    Effect.gen(function*() {
      const { client, launch, projectPath } = yield* scriptedProject([])
      const agent = yield* launch()
      const error = yield* expectFailure(
        client.agents.control({ params: { ...projectPath, agentID: agent.id }, payload: { control_type: "cancel_current" } })
      )
      expect(error._tag).toBe("StateTransitionConflict")
    }))
})
