/**
 * Turn lifecycle: backlog order and bound, cancel mid-turn (model call in flight, by this process
 * or by another, and while waiting for a tool result), provider errors (a 429 retried, a provider
 * that keeps failing), and a turn's end and an input, each in one statement, meeting another
 * process's append (an input also after its agent's last turn ended here), a model call's tool
 * calls meeting another process's cancel, and an input under another project than its agent's.
 */
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import type { TurnId } from "../../src/domain/shared/Ids.ts"
import { MAX_BACKLOG } from "../../src/services/runtime/AgentInputs.ts"
import { appendElsewhere, appendHoldingAgent, waitedOn } from "../support/HeldAgent.ts"
import { eventually } from "../support/Polling.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { expectFailure } from "../support/TestApp.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

/** A project's agent whose first input ("busy") started a turn the provider holds, with that input. */
const busyAgent = Effect.gen(function*() {
  const provider = yield* ScriptedProvider
  const rt = yield* runtimeProject(provider)
  yield* provider.script([Reply.hang()], { model: rt.slug })
  const agent = yield* rt.launch()
  const first = yield* rt.send(agent.id, "busy")
  return { rt, agent, first }
})

/** Each event's kind with its sequence's distance from the first event's. */
const kindsFromFirst = (events: ReadonlyArray<{ event_kind: string; sequence: number }>) =>
  events.map((event) => [event.event_kind, event.sequence - events[0].sequence])

/** The sequence of the event an input's row names. */
const inputRowSequence = (sql: SqlClient.SqlClient, inputId: string) =>
  Effect.map(
    sql<{ readonly event_sequence: number }>`SELECT event_sequence FROM agent_inputs WHERE id = ${inputId}`,
    (rows) => rows[0].event_sequence
  )

const turnStatuses = (events: ReadonlyArray<{ event_kind: string; turn_status?: string }>) =>
  events.flatMap((event) => event.event_kind === "turn" ? [event.turn_status] : [])

describeRuntime("120 seconds")("lifecycle", (it) => {
  it.effect("backlog: inputs wait in order, run one turn each in order; past the bound, agent_backlog_full", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.text("first", { delay_ms: 1500 }), Reply.text("second"), Reply.text("third")], { model: rt.slug })
      const agent = yield* rt.launch()
      const first = yield* rt.send(agent.id, "one")
      const second = yield* rt.send(agent.id, "two")
      const third = yield* rt.send(agent.id, "three")
      expect([first.disposition, second.disposition, third.disposition]).toEqual(["started", "queued", "queued"])
      const backlog = yield* rt.client.agents.listBacklog({ params: rt.agentPath(agent.id), query: {} })
      expect(backlog.data.map((input) => input.id)).toEqual([second.event.agent_input_id, third.event.agent_input_id])
      yield* eventually(rt.events(agent.id), (events) => turnStatuses(events).filter((s) => s === "completed").length === 3, "three turns")
      const events = yield* rt.events(agent.id)
      const outputs = events.flatMap((event) => event.event_kind === "model_output" ? [event] : [])
      expect(outputs.map((event) => [event.turn_id, (event.content_blocks[0] as { text: string }).text])).toEqual([
        [first.event.turn_id, "first"],
        [second.event.turn_id, "second"],
        [third.event.turn_id, "third"]
      ])
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      const lastInput = JSON.stringify(requests[2].body!.input)
      expect(lastInput.indexOf("one")).toBeLessThan(lastInput.indexOf("two"))
      expect(lastInput.indexOf("two")).toBeLessThan(lastInput.indexOf("three"))
    }))

  it.effect(`the backlog holds ${MAX_BACKLOG} queued inputs; the next is agent_backlog_full; withdrawing one makes room`, () =>
    Effect.gen(function*() {
      const { agent, rt } = yield* busyAgent
      const queued = yield* Effect.forEach(Array.from({ length: MAX_BACKLOG }, (_, i) => i), (i) => rt.send(agent.id, `queued ${i}`))
      expect(queued.every((input) => input.disposition === "queued")).toBe(true)
      const full = yield* expectFailure(rt.send(agent.id, "one too many"))
      expect(full._tag).toBe("AgentBacklogFull")
      yield* rt.client.agents.withdrawInput({ params: { ...rt.agentPath(agent.id), inputID: queued[0].event.agent_input_id } })
      const again = yield* rt.send(agent.id, "fits now")
      expect(again.disposition).toBe("queued")
      const twice = yield* expectFailure(
        rt.client.agents.withdrawInput({ params: { ...rt.agentPath(agent.id), inputID: queued[0].event.agent_input_id } })
      )
      expect(twice._tag).toBe("StateTransitionConflict")
      const events = yield* rt.client.agents.listEvents({ params: rt.agentPath(agent.id), query: { before_sequence: 0, limit: 3 } })
      expect(events.data.find((event) => event.event_kind === "turn" && event.turn_id === queued[0].event.turn_id)).toMatchObject({
        turn_status: "cancelled"
      })
    }))

  it.effect("cancel with a model call in flight: the call is aborted, the turn cancelled, the next input runs", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, { format: "anthropic-messages" })
      yield* provider.script([Reply.hang(), Reply.text("next one done")], { model: rt.slug })
      const agent = yield* rt.launch()
      const before = (yield* provider.requests).length
      const first = yield* rt.send(agent.id, "slow")
      const second = yield* rt.send(agent.id, "after")
      yield* eventually(provider.requests, (all) => all.some((r) => r.body?.model === rt.slug), "the model call")
      const control = yield* rt.client.agents.control({ params: rt.agentPath(agent.id), payload: { control_type: "cancel_current" } })
      expect(control).toMatchObject({ event_kind: "control", control_type: "cancel_current", turn_id: first.event.turn_id })
      yield* eventually(provider.requests, (all) => all.filter((r) => r.body?.model === rt.slug)[0]?.aborted === true, "the call aborted")
      yield* eventually(rt.events(agent.id), (events) => turnStatuses(events).includes("completed"), "the next turn")
      yield* rt.idle(agent.id)
      const events = yield* rt.events(agent.id)
      const firstTurn = events.filter((event) => event.turn_id === first.event.turn_id).map((event) => event.event_kind)
      expect(firstTurn).toEqual(["agent_input", "turn", "control", "turn"])
      expect(events.find((e) => e.event_kind === "turn" && e.turn_id === first.event.turn_id && e.turn_status === "cancelled")).toBeDefined()
      expect(events.find((e) => e.event_kind === "turn" && e.turn_id === second.event.turn_id && e.turn_status === "completed")).toBeDefined()
      expect((yield* provider.requests).length - before).toBe(2)
      const nothing = yield* expectFailure(rt.client.agents.control({ params: rt.agentPath(agent.id), payload: { control_type: "cancel_current" } }))
      expect(nothing._tag).toBe("StateTransitionConflict")
    }))

  it.effect("cancel naming its turn: a retry after the turn ended cancels nothing, not the turn that came next", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.hang(), Reply.hang()], { model: rt.slug })
      const agent = yield* rt.launch()
      const first = yield* rt.send(agent.id, "slow")
      const second = yield* rt.send(agent.id, "after")
      const cancelTurn = (turnId: TurnId) =>
        rt.client.agents.control({ params: rt.agentPath(agent.id), payload: { control_type: "cancel_current", turn_id: turnId } })
      expect(yield* cancelTurn(first.event.turn_id!)).toMatchObject({ event_kind: "control", turn_id: first.event.turn_id })
      const current = yield* eventually(
        rt.client.agents.get({ params: rt.agentPath(agent.id) }),
        (found) => found.current_turn_id === second.event.turn_id,
        "the next turn"
      )
      expect(current.status).toBe("running")
      const retried = yield* expectFailure(cancelTurn(first.event.turn_id!))
      expect(retried).toMatchObject({
        _tag: "StateTransitionConflict",
        error: expect.stringContaining(`nothing was cancelled. The current turn is ${second.event.turn_id}`)
      })
      expect(yield* rt.client.agents.get({ params: rt.agentPath(agent.id) })).toMatchObject({
        status: "running",
        current_turn_id: second.event.turn_id
      })
      expect(yield* cancelTurn(second.event.turn_id!)).toMatchObject({ turn_id: second.event.turn_id })
      yield* rt.idle(agent.id)
      const idle = yield* expectFailure(cancelTurn(second.event.turn_id!))
      expect(idle).toMatchObject({ _tag: "StateTransitionConflict", error: expect.stringContaining("No turn is running now") })
    }))

  it.effect("a turn another process ended (its row only): its call in flight here is aborted, another agent's is not", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const sql = yield* SqlClient.SqlClient
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.hang(), Reply.hang()], { model: rt.slug })
      const [ended, running] = [yield* rt.launch(), yield* rt.launch()]
      const calls = Effect.map(provider.requests, (all) => all.filter((r) => r.body?.model === rt.slug))
      const endedInput = yield* rt.send(ended.id, "ended elsewhere")
      yield* eventually(calls, (all) => all.length === 1, "the first model call")
      yield* rt.send(running.id, "still running")
      yield* eventually(calls, (all) => all.length === 2, "the second model call")
      yield* sql`UPDATE turns SET status = 'cancelled' WHERE id = ${endedInput.event.turn_id}`
      yield* eventually(calls, (all) => all[0].aborted, "the first call aborted")
      expect((yield* calls)[1].aborted).toBe(false)
      yield* rt.client.agents.control({ params: rt.agentPath(running.id), payload: { control_type: "cancel_current" } })
    }))

  // A result's one statement sets the agent's status with its turn's only while the turn has not
  // ended (TurnLifecycle.completeCallAlone): a call left ready on a turn ended elsewhere still
  // takes its result, and the agent keeps the status the end left.
  it.effect("a ready call of a turn another process ended (rows only): its result is taken, the agent stays idle", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const sql = yield* SqlClient.SqlClient
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.toolCall("lookup", { query: "a" })], { model: rt.slug })
      const agent = yield* rt.launch()
      const sent = yield* rt.send(agent.id, "look it up")
      yield* rt.waiting(agent.id)
      const [call] = yield* rt.toolCalls(agent.id)
      yield* sql`UPDATE turns SET status = 'failed', completed_at = now() WHERE id = ${sent.event.turn_id}`
      yield* sql`UPDATE agents SET status = 'idle', current_turn_id = NULL WHERE id = ${agent.id}`
      const accepted = yield* rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(agent.id), toolCallID: call.id },
        payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "a is 1" }] }
      })
      expect(accepted.tool_call).toMatchObject({ state: "completed", outcome: "succeeded" })
      expect(yield* rt.client.agents.get({ params: rt.agentPath(agent.id) })).toMatchObject({
        status: "idle",
        current_turn_id: null
      })
      const turn = yield* rt.client.agents.getTurn({ params: { ...rt.agentPath(agent.id), turnID: sent.event.turn_id! } })
      expect(turn.status).toBe("failed")
    }))

  it.effect("cancel while waiting for a custom tool result and an approval: calls cancelled, interaction closed, results refused", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([
        Reply.answer([{ type: "tool_call", name: "lookup", input: { query: "a" } }, { type: "tool_call", name: "deploy", input: {} }]),
        Reply.text("fresh start")
      ], { model: rt.slug })
      const agent = yield* rt.launch()
      const first = yield* rt.send(agent.id, "do both")
      yield* rt.waiting(agent.id)
      yield* rt.client.agents.control({ params: rt.agentPath(agent.id), payload: { control_type: "cancel_current" } })
      yield* rt.idle(agent.id)
      const calls = yield* rt.toolCalls(agent.id)
      expect(calls.map((call) => call.state)).toEqual(["cancelled", "cancelled"])
      const [interaction] = yield* rt.interactions(agent.id)
      expect(interaction.status).toBe("closed")
      const refused = yield* expectFailure(rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(agent.id), toolCallID: calls[0].id },
        payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "late" }] }
      }))
      expect(refused._tag).toBe("StateTransitionConflict")
      const closed = yield* expectFailure(rt.client.interactions.resolve({
        params: { ...rt.projectPath, interactionID: interaction.id },
        payload: { decision: "approve" }
      }))
      expect(closed._tag).toBe("StateTransitionConflict")
      const turn = yield* rt.client.agents.getTurn({ params: { ...rt.agentPath(agent.id), turnID: first.event.turn_id! } })
      expect(turn.status).toBe("cancelled")

      // The next turn sends the cancelled calls with failed results, as every provider requires.
      yield* rt.send(agent.id, "again")
      yield* eventually(rt.events(agent.id), (events) => turnStatuses(events).includes("completed"), "the next turn")
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      const outputs = (requests[1].body!.input as Array<any>).filter((item) => item.type === "function_call_output")
      expect(outputs).toHaveLength(2)
      expect(outputs[0].output).toContain("cancelled")
    }))

  it.effect("a 429 is retried and the turn completes", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider, { format: "openai-chat-completions" })
      yield* provider.script([Reply.error(429, "Rate limit reached", { retry_after: "0" }), Reply.text("after the limit")], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "hello")
      yield* rt.idle(agent.id)
      const events = yield* rt.events(agent.id)
      expect(turnStatuses(events)).toEqual(["started", "completed"])
      expect((yield* provider.requests).filter((request) => request.body?.model === rt.slug)).toHaveLength(2)
    }))

  it.effect("a provider that keeps failing: the turn fails with its message, the agent goes on to the next input", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([
        Reply.error(503, "The engine is overloaded"),
        Reply.error(503, "The engine is overloaded"),
        Reply.error(503, "The engine is overloaded"),
        Reply.text("recovered")
      ], { model: rt.slug })
      const agent = yield* rt.launch()
      const first = yield* rt.send(agent.id, "one")
      yield* rt.send(agent.id, "two")
      yield* eventually(rt.events(agent.id), (events) => turnStatuses(events).includes("completed"), "the second turn")
      const events = yield* rt.events(agent.id)
      const failed = events.find((event) => event.event_kind === "turn" && event.turn_status === "failed")
      expect(failed).toMatchObject({ turn_id: first.event.turn_id })
      expect((failed as { error: string }).error).toContain("The engine is overloaded")
      expect((failed as { error: string }).error).toContain("503")
      const turn = yield* rt.client.agents.getTurn({ params: { ...rt.agentPath(agent.id), turnID: first.event.turn_id! } })
      // One model call, retried twice by the client before it gave up.
      expect(turn).toMatchObject({ status: "failed", model_calls: 1 })
      yield* rt.idle(agent.id)
    }))

  // The turn's end is one statement that numbers the turn's events from its snapshot and does not
  // wait for the agent's lock (AgentsRepository.lockTimelineUnchanged): an append holding the
  // agent sends it the transaction's way, which waits, and must not be overlooked. Postgres only:
  // the embedded database has one connection.
  it.effect.skipIf(usesEmbeddedDatabase)(
    "an append that holds the agent while the turn's last model call ends: the turn's events are numbered after it, none twice",
    () =>
      Effect.gen(function*() {
        const provider = yield* ScriptedProvider
        const sql = yield* SqlClient.SqlClient
        const rt = yield* runtimeProject(provider)
        yield* provider.script([Reply.text("the answer", { delay_ms: 500, usage: { input_tokens: 7, output_tokens: 2 } })], {
          model: rt.slug
        })
        const agent = yield* rt.launch()
        const sent = yield* rt.send(agent.id, "hello")
        const turnId = sent.event.turn_id!
        yield* eventually(provider.requests, (all) => all.some((r) => r.body?.model === rt.slug), "the model call")
        // Another process's append to the turn, holding the agent's row until the turn's end waits for it.
        yield* appendHoldingAgent(sql, agent.id, turnId, "the turn's end waiting for the agent")
        yield* rt.idle(agent.id)
        const turn = (yield* rt.events(agent.id)).filter((event) => event.turn_id === turnId)
        expect(turn.map((event) => [event.event_kind, event.turn_sequence])).toEqual([
          ["agent_input", 0],
          ["turn", 1],
          ["model_output", 2],
          ["model_output", 3],
          ["turn", 4]
        ])
        expect(turn.map((event) => event.sequence - turn[0].sequence)).toEqual([0, 1, 2, 3, 4])
        expect(turn[4]).toMatchObject({
          turn_status: "completed",
          usage: { input_tokens: 7, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0 }
        })
      })
  )

  // A model call that made tool calls is recorded by a statement that finds whether the turn
  // still runs: the last of a transaction (TurnsRepository.recordCallsStep; a call that asks for
  // approval takes it), or the only one when every call just waits for its result
  // (TurnLifecycle.recordCallsAlone; with the agent held, it takes the transaction's way). A turn
  // another process cancelled while the record waited for the agent leaves nothing of the calls
  // either way. Postgres only, as above.
  for (
    const [way, calls] of [
      ["in a transaction", [{ name: "lookup", input: { query: "a" } }, { name: "deploy", input: {} }]],
      ["in one statement", [{ name: "lookup", input: { query: "a" } }]]
    ] as const
  ) {
    it.effect.skipIf(usesEmbeddedDatabase)(
      `a turn another process cancelled while its tool calls waited to be recorded ${way}: no call, no event of them, the next turn runs`,
      () =>
        Effect.gen(function*() {
          const provider = yield* ScriptedProvider
          const sql = yield* SqlClient.SqlClient
          const rt = yield* runtimeProject(provider)
          yield* provider.script([
            Reply.answer(calls.map((call) => ({ type: "tool_call" as const, ...call })), { delay_ms: 500 }),
            Reply.text("the next turn")
          ], { model: rt.slug })
          const agent = yield* rt.launch()
          const sent = yield* rt.send(agent.id, "do it")
          const turnId = sent.event.turn_id!
          yield* eventually(provider.requests, (all) => all.some((r) => r.body?.model === rt.slug), "the model call")
          // Another process's cancel, holding the agent's row until the calls' record waits for it.
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`SELECT id FROM agents WHERE id = ${agent.id} FOR UPDATE`
            yield* waitedOn(sql, "the record of the tool calls waiting for the agent")
            yield* sql`UPDATE turns SET status = 'cancelled', completed_at = now() WHERE id = ${turnId}`
            yield* appendElsewhere(sql, agent.id, turnId, "turn", { turn_status: "cancelled", error: null, usage: null })
            yield* sql`UPDATE agents SET status = 'idle', current_turn_id = NULL WHERE id = ${agent.id}`
          }))
          yield* rt.send(agent.id, "again")
          yield* eventually(rt.events(agent.id), (events) => turnStatuses(events).includes("completed"), "the next turn")
          const turn = (yield* rt.events(agent.id)).filter((event) => event.turn_id === turnId)
          expect(turn.map((event) => event.event_kind)).toEqual(["agent_input", "turn", "turn"])
          expect(yield* rt.toolCalls(agent.id)).toEqual([])
          expect(yield* rt.interactions(agent.id)).toEqual([])
          const cancelled = yield* rt.client.agents.getTurn({ params: { ...rt.agentPath(agent.id), turnID: turnId } })
          expect(cancelled).toMatchObject({ status: "cancelled", model_calls: 0 })
          yield* rt.idle(agent.id)
        })
    )
  }

  // A model call whose tool calls each just wait for their result is recorded in one statement
  // that numbers the call's events from its snapshot (TurnLifecycle.recordCallsAlone): an append
  // holding the agent sends it the transaction's way. Postgres only, as above.
  it.effect.skipIf(usesEmbeddedDatabase)(
    "an append that holds the agent while a custom tool call is recorded: the call's event comes after it, the turn waits for its result",
    () =>
      Effect.gen(function*() {
        const provider = yield* ScriptedProvider
        const sql = yield* SqlClient.SqlClient
        const rt = yield* runtimeProject(provider)
        yield* provider.script([
          Reply.answer([{ type: "tool_call", name: "lookup", input: { query: "a" } }], {
            delay_ms: 500,
            usage: { input_tokens: 5, output_tokens: 1 }
          }),
          Reply.text("found it")
        ], { model: rt.slug })
        const agent = yield* rt.launch()
        const sent = yield* rt.send(agent.id, "look it up")
        const turnId = sent.event.turn_id!
        yield* eventually(provider.requests, (all) => all.some((r) => r.body?.model === rt.slug), "the model call")
        // Another process's append to the turn, holding the agent's row until the call's record waits for it.
        yield* appendHoldingAgent(sql, agent.id, turnId, "the record of the tool call waiting for the agent")
        const [call] = yield* eventually(rt.toolCalls(agent.id), (calls) => calls.length === 1, "the tool call")
        expect(call).toMatchObject({ name: "lookup", state: "ready", turn_id: turnId })
        const waiting = (yield* rt.events(agent.id)).filter((event) => event.turn_id === turnId)
        expect(waiting.map((event) => [event.event_kind, event.turn_sequence])).toEqual([
          ["agent_input", 0],
          ["turn", 1],
          ["model_output", 2],
          ["tool_call", 3]
        ])
        expect(yield* rt.client.agents.get({ params: rt.agentPath(agent.id) })).toMatchObject({
          status: "waiting",
          current_turn_id: turnId
        })
        expect(yield* rt.client.agents.getTurn({ params: { ...rt.agentPath(agent.id), turnID: turnId } })).toMatchObject({
          status: "waiting",
          model_calls: 1,
          usage: { input_tokens: 5, output_tokens: 1 }
        })
        yield* rt.client.toolCalls.submitResult({
          params: { ...rt.agentPath(agent.id), toolCallID: call.id },
          payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "a is 1" }] }
        })
        yield* rt.idle(agent.id)
        const turn = (yield* rt.events(agent.id)).filter((event) => event.turn_id === turnId)
        expect(turn.map((event) => event.event_kind)).toEqual([
          "agent_input",
          "turn",
          "model_output",
          "tool_call",
          "tool_result",
          "model_output",
          "turn"
        ])
        expect(turn.map((event) => event.sequence - turn[0].sequence)).toEqual([0, 1, 2, 3, 4, 5, 6])
      })
  )

  // A custom tool call's result is one statement too (TurnLifecycle.completeCallAlone), which
  // numbers the result's event from its snapshot: an append holding the agent sends it the
  // transaction's way. Postgres only, as above.
  it.effect.skipIf(usesEmbeddedDatabase)(
    "an append that holds the agent while a tool result is recorded: the result's event comes after it, the turn goes on",
    () =>
      Effect.gen(function*() {
        const provider = yield* ScriptedProvider
        const sql = yield* SqlClient.SqlClient
        const rt = yield* runtimeProject(provider)
        yield* provider.script([
          Reply.answer([{ type: "tool_call", name: "lookup", input: { query: "a" } }]),
          Reply.text("found it")
        ], { model: rt.slug })
        const agent = yield* rt.launch()
        const sent = yield* rt.send(agent.id, "look it up")
        const turnId = sent.event.turn_id!
        const [call] = yield* eventually(rt.toolCalls(agent.id), (calls) => calls.length === 1, "the tool call")
        yield* eventually(rt.client.agents.get({ params: rt.agentPath(agent.id) }), (a) => a.status === "waiting", "the wait")
        // Another process's append to the turn, holding the agent's row before the result is sent
        // (sent first, it could be stored before the row is held, CI once saw it) until it waits.
        const submitted = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT id FROM agents WHERE id = ${agent.id} FOR UPDATE`
          const submitted = yield* Effect.forkChild(rt.client.toolCalls.submitResult({
            params: { ...rt.agentPath(agent.id), toolCallID: call.id },
            payload: { outcome: "succeeded", content_blocks: [{ type: "text", text: "a is 1" }] }
          }))
          yield* waitedOn(sql, "the tool result waiting for the agent")
          yield* appendElsewhere(sql, agent.id, turnId, "model_output", {
            content_blocks: [{ type: "text", text: "from another process" }]
          })
          return submitted
        }))
        const accepted = yield* Fiber.join(submitted)
        expect(accepted.tool_call).toMatchObject({ id: call.id, state: "completed", outcome: "succeeded" })
        yield* rt.idle(agent.id)
        const turn = (yield* rt.events(agent.id)).filter((event) => event.turn_id === turnId)
        expect(turn.map((event) => [event.event_kind, event.turn_sequence])).toEqual([
          ["agent_input", 0],
          ["turn", 1],
          ["tool_call", 2],
          ["model_output", 3],
          ["tool_result", 4],
          ["model_output", 5],
          ["turn", 6]
        ])
        expect(turn[4]).toMatchObject({ id: accepted.tool_result.event_id })
      })
  )

  // An input is one statement after a read of the agent, which writes only while the agent is as
  // read (AgentsRepository.lockUnchanged): an append holding the agent, or committed between the
  // read and that statement, sends the input the transaction's way. Postgres only, as above.
  it.effect.skipIf(usesEmbeddedDatabase)(
    "an append that holds the agent while an input is recorded: the input's event comes after it and its row names that event",
    () =>
      Effect.gen(function*() {
        const provider = yield* ScriptedProvider
        const sql = yield* SqlClient.SqlClient
        const rt = yield* runtimeProject(provider)
        yield* provider.script([Reply.text("the answer")], { model: rt.slug })
        const agent = yield* rt.launch()
        // Another process's append (a cancel with no turn running), holding the agent's row until
        // the input's statement waits for it.
        const sending = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT id FROM agents WHERE id = ${agent.id} FOR UPDATE`
          const sending = yield* Effect.forkChild(rt.send(agent.id, "hello"))
          yield* waitedOn(sql, "the input waiting for the agent")
          yield* appendElsewhere(sql, agent.id, null, "control", { control_type: "cancel_current", actor_id: null })
          return sending
        }))
        const sent = yield* Fiber.join(sending)
        expect(sent.disposition).toBe("started")
        yield* rt.idle(agent.id)
        const events = yield* rt.events(agent.id)
        expect(kindsFromFirst(events)).toEqual([
          ["control", 0],
          ["agent_input", 1],
          ["turn", 2],
          ["model_output", 3],
          ["turn", 4]
        ])
        expect(sent.event.sequence).toBe(events[1].sequence)
        expect(yield* inputRowSequence(sql, sent.event.agent_input_id)).toBe(sent.event.sequence)
      })
  )

  // An input to an agent whose last turn ended in this process decides on the agent's row as that
  // turn's end left it, without reading it (KnownAgentRows), guarded as above: another process's
  // append since then sends it the read's way.
  it.effect("an input after another process's append to an agent left idle here: the input's row names its own event", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const sql = yield* SqlClient.SqlClient
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.text("first"), Reply.text("second")], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "one")
      yield* rt.idle(agent.id)
      yield* sql.withTransaction(
        appendElsewhere(sql, agent.id, null, "control", { control_type: "cancel_current", actor_id: null })
      )
      const sent = yield* rt.send(agent.id, "two")
      expect(sent.disposition).toBe("started")
      yield* rt.idle(agent.id)
      const events = yield* rt.events(agent.id)
      expect(kindsFromFirst(events)).toEqual([
        ["agent_input", 0],
        ["turn", 1],
        ["model_output", 2],
        ["turn", 3],
        ["control", 4],
        ["agent_input", 5],
        ["turn", 6],
        ["model_output", 7],
        ["turn", 8]
      ])
      expect(sent.event.sequence).toBe(events[5].sequence)
      expect(yield* inputRowSequence(sql, sent.event.agent_input_id)).toBe(sent.event.sequence)
    }))

  // Inputs sent one after another to a busy agent decide on the row the last one left
  // (KnownAgentRows), guarded the same way: another process's append between two sends the next
  // input the read's way.
  it.effect("inputs queued behind a running turn, another process's append between two: each input's row names its own event", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { agent, first, rt } = yield* busyAgent
      const second = yield* rt.send(agent.id, "two")
      yield* sql.withTransaction(
        appendElsewhere(sql, agent.id, null, "control", { control_type: "cancel_current", actor_id: null })
      )
      const third = yield* rt.send(agent.id, "three")
      const fourth = yield* rt.send(agent.id, "four")
      expect([first, second, third, fourth].map((sent) => sent.disposition)).toEqual(["started", "queued", "queued", "queued"])
      expect(kindsFromFirst(yield* rt.events(agent.id))).toEqual([
        ["agent_input", 0],
        ["turn", 1],
        ["agent_input", 2],
        ["control", 3],
        ["agent_input", 4],
        ["agent_input", 5]
      ])
      for (const sent of [second, third, fourth]) {
        expect(yield* inputRowSequence(sql, sent.event.agent_input_id)).toBe(sent.event.sequence)
      }
      const backlog = yield* rt.client.agents.listBacklog({ params: rt.agentPath(agent.id), query: {} })
      expect(backlog.data.map((input) => input.id)).toEqual([second, third, fourth].map((sent) => sent.event.agent_input_id))
    }))

  it.effect("a backlog full by the row the last input left has room once a queued input is withdrawn elsewhere: the input is queued", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { agent, rt } = yield* busyAgent
      const queued = yield* Effect.forEach(Array.from({ length: MAX_BACKLOG }, (_, i) => i), (i) => rt.send(agent.id, `queued ${i}`))
      // Withdrawn by a statement of another process: the row this process remembers still counts it.
      yield* sql`UPDATE agent_inputs SET status = 'withdrawn' WHERE id = ${queued[0].event.agent_input_id}`
      const next = yield* rt.send(agent.id, "fits now")
      expect(next.disposition).toBe("queued")
      expect(yield* inputRowSequence(sql, next.event.agent_input_id)).toBe(next.event.sequence)
    }))

  it.effect("an input for an agent left idle here, sent under another project of the caller: not_found, nothing recorded", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.text("first")], { model: rt.slug })
      const agent = yield* rt.launch()
      yield* rt.send(agent.id, "one")
      yield* rt.idle(agent.id)
      const other = yield* rt.client.projects.create({ params: { orgID: rt.org.id }, payload: { name: "Other" } })
      const refused = yield* expectFailure(rt.client.agents.sendInput({
        params: { orgID: rt.org.id, projectID: other.id, agentID: agent.id },
        payload: { content_blocks: [{ type: "text", text: "two" }] }
      }))
      expect(refused._tag).toBe("NotFound")
      expect((yield* rt.events(agent.id)).map((event) => event.event_kind)).toEqual(["agent_input", "turn", "model_output", "turn"])
    }))

  it.effect("a turn that failed on a provider 404 counts its model call", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.error(404, "The model does not exist or you do not have access to it.")], {
        model: rt.slug
      })
      const agent = yield* rt.launch()
      const sent = yield* rt.send(agent.id, "hello")
      yield* rt.idle(agent.id)
      const turn = yield* rt.client.agents.getTurn({ params: { ...rt.agentPath(agent.id), turnID: sent.event.turn_id! } })
      expect(turn).toMatchObject({
        status: "failed",
        error: expect.stringContaining("HTTP 404"),
        model_calls: 1,
        usage: { input_tokens: 0, output_tokens: 0 }
      })
      expect((yield* provider.requests).filter((request) => request.body?.model === rt.slug)).toHaveLength(1)
    }))
})
