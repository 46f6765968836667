/**
 * Tool calls, custom tool results and interactions through the HTTP API, with the engine running
 * turns against the scripted provider: the 409 rules (results sent at once among them), the 404s, every size limit (nothing stored
 * on failure), media_ref blocks downloadable from the artifacts route, approvals and questions.
 */
import { SqlClient } from "effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { AgentId } from "../../src/domain/shared/Ids.ts"
import { agentProject } from "../support/AgentProject.ts"
import { eventually } from "../support/Polling.ts"
import { Reply, ScriptedProvider, type ScriptedReply } from "../support/ScriptedProvider.ts"
import { declareBody, getBytes } from "../support/RawHttp.ts"
import { expectFailure, ID_PATTERN, TestAppLive } from "../support/TestApp.ts"

const MiB = 1024 * 1024

const media = (bytes: number | Buffer, media_type = "application/octet-stream") => ({
  type: "media" as const,
  media_type,
  data: (typeof bytes === "number" ? Buffer.alloc(bytes, 1) : bytes).toString("base64")
})

const artifactsOf = (agentId: AgentId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ count: string }>`SELECT count(*) FROM artifacts WHERE agent_id = ${agentId}`)
    .pipe(Effect.map((rows) => Number(rows[0].count)), Effect.orDie)

/** A project whose model is served by the scripted provider under its own slug, an agent, and a first input that runs `replies`. */
const agentRunning = (replies: ReadonlyArray<ScriptedReply>) =>
  Effect.gen(function*() {
    const provider = yield* ScriptedProvider
    const slug = `model-${randomBytes(4).toString("hex")}`
    const setup = yield* agentProject({ label: "Tools", baseUrl: provider.baseUrl("openai-responses"), slug })
    yield* provider.script(replies, { model: slug })
    const agent = yield* setup.launch()
    const agentPath = { ...setup.projectPath, agentID: agent.id }
    const client = setup.owner.client
    const accepted = yield* client.agents.sendInput({
      params: agentPath,
      payload: { content_blocks: [{ type: "text", text: "Go" }] }
    })
    expect(accepted.disposition).toBe("started")
    /** The agent's only tool call, once it reached `state`. */
    const callIn = (state: string) =>
      eventually(
        client.toolCalls.list({ params: agentPath, query: {} }),
        (page) => page.data.length > 0 && page.data[page.data.length - 1].state === state,
        `a tool call in state ${state}`
      ).pipe(Effect.map((page) => page.data[page.data.length - 1]))
    const turnDone = eventually(
      client.agents.listTurns({ params: agentPath, query: {} }),
      (page) => page.data.length > 0 && page.data.every((turn) => turn.status === "completed"),
      "the turn to complete"
    )
    return { ...setup, provider, slug, agent, agentPath, client, accepted, callIn, turnDone }
  })

const TestLive = Layer.merge(TestAppLive(), ScriptedProvider.layer)

it.layer(TestLive)("tool results", (it) => {
  it.effect("a ready custom call: the first result completes it (201), a later one is 409; media come back as media_ref", () =>
    Effect.gen(function*() {
      const { agent, agentPath, callIn, client, owner, projectPath, turnDone } = yield* agentRunning([
        Reply.toolCall("lookup", { query: "weather" }),
        Reply.text("It is sunny")
      ])
      const call = yield* callIn("ready")
      expect(call.id).toMatch(ID_PATTERN("tcl"))
      expect(call).toMatchObject({ agent_id: agent.id, name: "lookup", type: "custom", input: { query: "weather" } })
      expect(call.outcome).toBeUndefined()
      expect((yield* client.toolCalls.get({ params: { ...agentPath, toolCallID: call.id } })).state).toBe("ready")

      const png = randomBytes(300)
      const [accepted, response] = yield* client.toolCalls.submitResult({
        params: { ...agentPath, toolCallID: call.id },
        payload: {
          outcome: "succeeded",
          content_blocks: [{ type: "text", text: "Sunny, 21 C" }, { ...media(png, "image/png"), metadata: { name: "map" } }]
        },
        responseMode: "decoded-and-response"
      })
      expect(response.status).toBe(201)
      expect(accepted.tool_call).toMatchObject({ id: call.id, state: "completed", outcome: "succeeded" })
      expect(accepted.tool_call.completed_at).toBeInstanceOf(Date)
      // The answer's call is the call as stored, completed when its result's event was recorded.
      expect(yield* client.toolCalls.get({ params: { ...agentPath, toolCallID: call.id } })).toEqual(accepted.tool_call)
      expect(accepted.tool_call.completed_at).toEqual(accepted.tool_result.created_at)
      expect(accepted.tool_result.event_id).toMatch(ID_PATTERN("evt"))
      expect(accepted.tool_result).toMatchObject({ agent_id: agent.id, tool_call_id: call.id, outcome: "succeeded" })
      const [text, ref] = accepted.tool_result.content_blocks
      expect(text).toEqual({ type: "text", text: "Sunny, 21 C" })
      expect(ref).toMatchObject({
        type: "media_ref",
        media_type: "image/png",
        size_bytes: 300,
        sha256: "sha256:" + createHash("sha256").update(png).digest("hex"),
        metadata: { name: "map" }
      })
      const artifactId = (ref as { artifact_id: string }).artifact_id
      expect(artifactId).toMatch(ID_PATTERN("art"))
      const artifactPath =
        `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}/artifacts/${artifactId}`
      const download = yield* getBytes(artifactPath, owner.token)
      expect(download.status).toBe(200)
      expect(download.headers["content-type"]).toBe("image/png")
      expect(download.headers["x-content-type-options"]).toBe("nosniff")
      expect(download.bytes.equals(png)).toBe(true)

      // The first result won: any later one is 409, and stores nothing.
      const artifactsBefore = yield* artifactsOf(agent.id)
      const again = yield* expectFailure(
        client.toolCalls.submitResult({
          params: { ...agentPath, toolCallID: call.id },
          payload: { outcome: "failed", content_blocks: [media(10)] }
        })
      )
      expect(again._tag).toBe("StateTransitionConflict")
      expect(yield* artifactsOf(agent.id)).toBe(artifactsBefore)

      yield* turnDone
      const events = yield* client.agents.listEvents({ params: agentPath, query: {} })
      const resultEvent = events.data.find((event) => event.event_kind === "tool_result")
      expect(resultEvent).toMatchObject({ id: accepted.tool_result.event_id, tool_call_id: call.id })
      // Another agent's path does not reach the artifact.
      const other = yield* agentProject({ label: "Other" })
      expect((yield* getBytes(artifactPath, other.owner.token)).status).toBe(404)
    }), { timeout: 60_000 })

  it.effect("a result is 404 on another agent, in another project, or for no call, and leaves the call ready", () =>
    Effect.gen(function*() {
      const { agent, agentPath, callIn, client, launch, otherProject, projectPath, turnDone } = yield* agentRunning([
        Reply.toolCall("lookup", { query: "weather" }),
        Reply.text("It is sunny")
      ])
      const call = yield* callIn("ready")
      const result = { outcome: "succeeded" as const, content_blocks: [{ type: "text" as const, text: "Sunny" }] }

      const sibling = yield* launch()
      const onSibling = yield* expectFailure(
        client.toolCalls.submitResult({ params: { ...projectPath, agentID: sibling.id, toolCallID: call.id }, payload: result })
      )
      expect(onSibling).toMatchObject({ _tag: "NotFound", error: `Tool call ${call.id} not found for agent ${sibling.id}` })

      // The caller may write in the other project of the org; the agent is not there.
      const elsewhere = yield* expectFailure(
        client.toolCalls.submitResult({
          params: { orgID: projectPath.orgID, projectID: otherProject.id, agentID: agent.id, toolCallID: call.id },
          payload: result
        })
      )
      expect(elsewhere).toMatchObject({ _tag: "NotFound", error: `Agent ${agent.id} not found in project ${otherProject.id}` })

      const noCall = `tcl_${"a".repeat(26)}` as typeof call.id
      const missing = yield* expectFailure(
        client.toolCalls.submitResult({ params: { ...agentPath, toolCallID: noCall }, payload: result })
      )
      expect(missing).toMatchObject({ _tag: "NotFound", error: `Tool call ${noCall} not found for agent ${agent.id}` })

      expect((yield* client.toolCalls.get({ params: { ...agentPath, toolCallID: call.id } })).state).toBe("ready")
      const accepted = yield* client.toolCalls.submitResult({ params: { ...agentPath, toolCallID: call.id }, payload: result })
      expect(accepted.tool_call).toMatchObject({ id: call.id, state: "completed", outcome: "succeeded" })
      yield* turnDone
    }), { timeout: 60_000 })

  it.effect("results sent at once for one call: the first to lock the call completes it (201), the others are 409", () =>
    Effect.gen(function*() {
      const { agentPath, callIn, client, turnDone } = yield* agentRunning([
        Reply.toolCall("lookup", { query: "weather" }),
        Reply.text("It is sunny")
      ])
      const call = yield* callIn("ready")
      const sent = yield* Effect.all(
        Array.from({ length: 4 }, (_, i) =>
          Effect.result(client.toolCalls.submitResult({
            params: { ...agentPath, toolCallID: call.id },
            payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: `answer ${i}` }] }
          }))),
        { concurrency: "unbounded" }
      )
      const taken = sent.flatMap((result) => result._tag === "Success" ? [result.success] : [])
      const refused = sent.flatMap((result) => result._tag === "Failure" ? [result.failure._tag] : [])
      expect(taken).toHaveLength(1)
      expect(refused).toEqual(["StateTransitionConflict", "StateTransitionConflict", "StateTransitionConflict"])
      yield* turnDone
      const events = yield* client.agents.listEvents({ params: agentPath, query: {} })
      const results = events.data.filter((event) => event.event_kind === "tool_result")
      expect(results.map((event) => event.id)).toEqual([taken[0].tool_result.event_id])
      expect(yield* client.toolCalls.get({ params: { ...agentPath, toolCallID: call.id } })).toEqual(taken[0].tool_call)
    }), { timeout: 60_000 })

  it.effect("two calls of one step: the first result leaves the turn and the agent waiting, the second sets them running", () =>
    Effect.gen(function*() {
      const { agentPath, client, turnDone } = yield* agentRunning([
        Reply.answer([
          { type: "tool_call", name: "lookup", input: { query: "a" } },
          { type: "tool_call", name: "lookup", input: { query: "b" } }
        ]),
        // Long enough to read the statuses the second result left before the turn ends.
        Reply.text("a and b", { delay_ms: 1500 })
      ])
      const calls = yield* eventually(
        client.toolCalls.list({ params: agentPath, query: {} }),
        (page) => page.data.length === 2 && page.data.every((call) => call.state === "ready"),
        "two ready calls"
      )
      const statuses = Effect.all([
        Effect.map(client.agents.get({ params: agentPath }), (agent) => agent.status),
        Effect.map(client.agents.listTurns({ params: agentPath, query: {} }), (page) => page.data[0].status)
      ])
      expect(yield* statuses).toEqual(["waiting", "waiting"])
      const submit = (toolCallID: typeof calls.data[number]["id"]) =>
        client.toolCalls.submitResult({
          params: { ...agentPath, toolCallID },
          payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "found" }] }
        })
      yield* submit(calls.data[0].id)
      expect(yield* statuses).toEqual(["waiting", "waiting"])
      yield* submit(calls.data[1].id)
      expect(yield* statuses).toEqual(["running", "running"])
      yield* turnDone
    }), { timeout: 60_000 })

  it.effect("a turn of three tool-calling steps: each result resumes it, each model call is made once, in order", () =>
    Effect.gen(function*() {
      const { agentPath, client, provider, slug, turnDone } = yield* agentRunning([
        Reply.toolCall("lookup", { query: "one" }),
        Reply.toolCall("lookup", { query: "two" }),
        Reply.toolCall("lookup", { query: "three" }),
        Reply.text("All three looked up")
      ])
      for (const query of ["one", "two", "three"]) {
        const page = yield* eventually(
          client.toolCalls.list({ params: agentPath, query: {} }),
          (page) => page.data.some((call) => call.input.query === query && call.state === "ready"),
          `the call for ${query}`
        )
        const call = page.data.find((call) => call.input.query === query)!
        yield* client.toolCalls.submitResult({
          params: { ...agentPath, toolCallID: call.id },
          payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: `found ${query}` }] }
        })
      }
      yield* turnDone
      const [turn] = (yield* client.agents.listTurns({ params: agentPath, query: {} })).data
      expect(turn).toMatchObject({ status: "completed", model_calls: 4 })
      const calls = (yield* provider.requests).filter((request) => request.body?.model === slug)
      expect(calls).toHaveLength(4)
      // Each call sends the results before it, in order.
      const results = calls.map((request) =>
        (request.body!.input as Array<any>).filter((item) => item.type === "function_call_output").map((item) => item.output)
      )
      expect(results).toEqual([[], ["found one"], ["found one", "found two"], ["found one", "found two", "found three"]])
      // Each call and its result carry the id the provider gave the call (the views of this
      // process fold the calls in as they commit, with the ids their record told them).
      const providerCallIds = (yield* client.toolCalls.list({ params: agentPath, query: {} })).data.map((call) => call.provider_call_id)
      expect(new Set(providerCallIds).size).toBe(3)
      const callIdsSent = calls.map((request) =>
        ["function_call", "function_call_output"].map((type) =>
          (request.body!.input as Array<any>).filter((item) => item.type === type).map((item) => item.call_id)
        )
      )
      expect(callIdsSent).toEqual([0, 1, 2, 3].map((n) => [providerCallIds.slice(0, n), providerCallIds.slice(0, n)]))
      const events = yield* client.agents.listEvents({ params: agentPath, query: {} })
      expect(events.data.filter((event) => event.turn_id === turn.id).map((event) => event.event_kind)).toEqual([
        "agent_input",
        "turn",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "model_output",
        "turn"
      ])
    }), { timeout: 60_000 })

  it.effect("every size limit refuses the result and stores nothing; the call stays ready", () =>
    Effect.gen(function*() {
      const { agent, agentPath, callIn, client, owner, projectPath } = yield* agentRunning([
        Reply.toolCall("lookup", { query: "big" }),
        Reply.text("done")
      ])
      const call = yield* callIn("ready")
      const path = { ...agentPath, toolCallID: call.id }
      const submit = (content_blocks: ReadonlyArray<ReturnType<typeof media> | { type: "text"; text: string }>) =>
        expectFailure(client.toolCalls.submitResult({ params: path, payload: { outcome: "succeeded", content_blocks } }))

      const count = yield* submit(Array.from({ length: 21 }, () => media(1)))
      expect(count).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/content_blocks" }] })
      const oneBlock = yield* submit([media(10 * MiB + 1)])
      expect(oneBlock._tag).toBe("RequestTooLarge")
      const total = yield* submit([media(10 * MiB), media(10 * MiB), media(4 * MiB + 1)])
      expect(total._tag).toBe("RequestTooLarge")
      const nonMedia = yield* submit([{ type: "text", text: "a".repeat(MiB / 2) }, { type: "text", text: "b".repeat(MiB / 2) }])
      expect(nonMedia._tag).toBe("RequestTooLarge")
      // The whole body: refused from its Content-Length before it is read.
      const body = yield* declareBody(
        `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}/tool-calls/${call.id}/result`,
        owner.token,
        48 * MiB + 1
      )
      expect(body.status).toBe(413)
      expect(body.json).toMatchObject({ code: "request_too_large" })

      expect(yield* artifactsOf(agent.id)).toBe(0)
      expect((yield* client.toolCalls.get({ params: path })).state).toBe("ready")

      // At every limit exactly: 20 blocks, 24 MiB of media, 1 MiB of text.
      const atLimits = [
        media(10 * MiB),
        media(10 * MiB),
        ...Array.from({ length: 18 }, () => media((4 * MiB) / 18 - ((4 * MiB) / 18) % 1)),
        { type: "text" as const, text: "t".repeat(MiB - 100) }
      ]
      const accepted = yield* client.toolCalls.submitResult({ params: path, payload: { outcome: "succeeded", content_blocks: atLimits } })
      expect(accepted.tool_result.content_blocks.filter((block) => block.type === "media_ref").length).toBe(20)
      expect(yield* artifactsOf(agent.id)).toBe(20)
      // The turn goes on with the result (a megabyte of text may not fit the model's window: it may fail).
      yield* eventually(
        client.agents.listTurns({ params: agentPath, query: {} }),
        (page) => page.data.every((turn) => turn.status === "completed" || turn.status === "failed"),
        "the turn to finish"
      )
    }), { timeout: 120_000 })

  it.effect("a built-in call (ask_question) refuses results (409); the question is answered through interactions", () =>
    Effect.gen(function*() {
      const { agentPath, callIn, client, projectPath, turnDone } = yield* agentRunning([
        Reply.toolCall("ask_question", { question: "Which region?" }),
        Reply.text("Deploying to eu")
      ])
      const call = yield* callIn("running")
      expect(call).toMatchObject({ type: "built_in", name: "ask_question" })
      const refused = yield* expectFailure(
        client.toolCalls.submitResult({
          params: { ...agentPath, toolCallID: call.id },
          payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "eu" }] }
        })
      )
      expect(refused._tag).toBe("StateTransitionConflict")

      const pending = yield* eventually(
        client.interactions.list({ params: projectPath, query: { status: "pending" } }),
        (page) => page.data.length === 1,
        "a pending question"
      )
      const question = pending.data[0]
      expect(question.id).toMatch(ID_PATTERN("intr"))
      expect(question).toMatchObject({ kind: "question", status: "pending", question: "Which region?", tool_call_id: call.id })
      const forAgent = yield* client.interactions.listForAgent({ params: agentPath, query: {} })
      expect(forAgent.data.map((i) => i.id)).toEqual([question.id])

      const resolved = yield* client.interactions.resolve({
        params: { ...projectPath, interactionID: question.id },
        payload: { decision: "approve", answer: "eu" }
      })
      expect(resolved).toMatchObject({ id: question.id, status: "resolved", decision: "approve", answer: "eu" })
      expect(resolved.resolved_at).toBeInstanceOf(Date)
      const twice = yield* expectFailure(
        client.interactions.resolve({
          params: { ...projectPath, interactionID: question.id },
          payload: { decision: "approve", answer: "us" }
        })
      )
      expect(twice._tag).toBe("StateTransitionConflict")
      yield* turnDone
      expect((yield* client.interactions.list({ params: projectPath, query: { status: "pending" } })).data).toEqual([])
      expect((yield* client.interactions.list({ params: projectPath, query: { status: "resolved" } })).data.length).toBe(1)
    }), { timeout: 60_000 })

  it.effect("a tool that asks: awaiting_authorization refuses results; approved, it is ready and takes one", () =>
    Effect.gen(function*() {
      const { agentPath, callIn, client, projectPath, turnDone } = yield* agentRunning([
        Reply.toolCall("deploy", { target: "prod" }),
        Reply.text("Deployed")
      ])
      const call = yield* callIn("awaiting_authorization")
      const early = yield* expectFailure(
        client.toolCalls.submitResult({
          params: { ...agentPath, toolCallID: call.id },
          payload: { outcome: "succeeded", content_blocks: [] }
        })
      )
      expect(early._tag).toBe("StateTransitionConflict")
      const [approval] = (yield* client.interactions.listForAgent({ params: agentPath, query: {} })).data
      expect(approval).toMatchObject({ kind: "approval", status: "pending", tool_call_id: call.id })
      yield* client.interactions.resolve({
        params: { ...projectPath, interactionID: approval.id },
        payload: { decision: "approve", message: "go ahead" }
      })
      yield* callIn("ready")
      const accepted = yield* client.toolCalls.submitResult({
        params: { ...agentPath, toolCallID: call.id },
        payload: { outcome: "failed", content_blocks: [{ type: "text", text: "quota exceeded" }] }
      })
      expect(accepted.tool_call).toMatchObject({ state: "completed", outcome: "failed" })
      yield* turnDone
    }), { timeout: 60_000 })

  it.effect("a denied approval: resolved with deny, resolving again is 409", () =>
    Effect.gen(function*() {
      const { agentPath, callIn, client, projectPath, turnDone } = yield* agentRunning([
        Reply.toolCall("deploy", { target: "prod" }),
        Reply.text("Not deployed")
      ])
      yield* callIn("awaiting_authorization")
      const [approval] = (yield* client.interactions.listForAgent({ params: agentPath, query: {} })).data
      const denied = yield* client.interactions.resolve({
        params: { ...projectPath, interactionID: approval.id },
        payload: { decision: "deny", message: "not today" }
      })
      expect(denied).toMatchObject({ status: "resolved", decision: "deny", message: "not today" })
      const again = yield* expectFailure(
        client.interactions.resolve({ params: { ...projectPath, interactionID: approval.id }, payload: { decision: "approve" } })
      )
      expect(again._tag).toBe("StateTransitionConflict")
      yield* turnDone
    }), { timeout: 60_000 })
})
