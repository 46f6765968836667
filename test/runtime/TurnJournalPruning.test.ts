/**
 * The pruning of finished turns' workflow journals (src/services/runtime/TurnJournalPruning.ts):
 * a finished turn's rows in `cluster_messages` and `cluster_replies` go once its retention has
 * passed, and any turn's once the turn is gone with its project (here with no retention); an
 * unfinished turn's stay, and the turn goes on from them.
 */
import { expect } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Duration, Effect } from "effect"
import type { TurnId } from "../../src/domain/shared/Ids.ts"
import { JOURNAL_RETENTION, TurnJournalPruning } from "../../src/services/runtime/TurnJournalPruning.ts"
import { turnStarted, TurnWorkflow, type TurnPayload } from "../../src/services/runtime/TurnWorkflow.ts"
import { eventually } from "../support/Polling.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { runtimeProject, text } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { describeRuntime } from "./RuntimeLayer.ts"

/** The rows an execution has in the cluster's tables: its messages and their replies. */
const journalRows = (payload: TurnPayload) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const executionId = yield* TurnWorkflow.executionId(payload)
    const [row] = yield* sql<{ messages: number; replies: number }>`
      SELECT (SELECT count(*)::int FROM cluster_messages WHERE entity_id = ${executionId}) AS messages,
        (SELECT count(*)::int FROM cluster_replies WHERE request_id IN
          (SELECT id FROM cluster_messages WHERE entity_id = ${executionId})) AS replies`
    return row
  })

/** The execution's rows once the engine saved the run's reply (just after the turn's end is committed). */
const settledJournalRows = (payload: TurnPayload) =>
  eventually(journalRows(payload), (rows) => rows.replies > 0, "the run's reply saved")

/** The cluster's messages as the last VACUUM (or ANALYZE) counted them, and as they are. */
const messageCounts = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ counted: number; live: number }>`
    SELECT (SELECT reltuples::int FROM pg_class WHERE relname = 'cluster_messages') AS counted,
      (SELECT count(*)::int FROM cluster_messages) AS live`.pipe(Effect.map(([row]) => row)))

const prune = (retention: Duration.Duration) => Effect.flatMap(TurnJournalPruning, (pruning) => pruning.prune(retention))

describeRuntime()("turn journal pruning", (it) => {
  it.effect("a finished turn's journal goes after its retention; a waiting turn's stays and the turn finishes from it", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script(
        [Reply.text("Done."), Reply.toolCall("lookup", { query: "status" }), Reply.text("All green.")],
        { model: rt.slug }
      )
      const finishedAgent = yield* rt.launch()
      const finished = yield* rt.send(finishedAgent.id, "Say done")
      yield* rt.idle(finishedAgent.id)
      const waitingAgent = yield* rt.launch()
      const waiting = yield* rt.send(waitingAgent.id, "Check the status")
      yield* rt.waiting(waitingAgent.id)

      const finishedTurn = { turn_id: finished.event.turn_id as TurnId, agent_id: finishedAgent.id }
      const waitingTurn = { turn_id: waiting.event.turn_id as TurnId, agent_id: waitingAgent.id }
      const finishedRows = yield* settledJournalRows(finishedTurn)
      expect(finishedRows.messages).toBeGreaterThan(0)
      const waitingRows = yield* settledJournalRows(waitingTurn)

      // Within its retention, the finished turn's journal stays.
      yield* prune(JOURNAL_RETENTION)
      expect(yield* journalRows(finishedTurn)).toEqual(finishedRows)

      expect(yield* prune(Duration.zero)).toBeGreaterThanOrEqual(1)
      expect(yield* journalRows(finishedTurn)).toEqual({ messages: 0, replies: 0 })
      expect(yield* turnStarted(finishedTurn)).toBe(false)
      expect(yield* journalRows(waitingTurn)).toEqual(waitingRows)
      if (usesEmbeddedDatabase) {
        // No autovacuum there: the pruning vacuums the tables it deleted from, which counts their rows.
        const { counted, live } = yield* messageCounts
        expect(counted).toBe(live)
      }

      // The waiting turn goes on from its journal: its recorded model call is not made again.
      const [call] = yield* rt.toolCalls(waitingAgent.id)
      yield* rt.client.toolCalls.submitResult({
        params: { ...rt.agentPath(waitingAgent.id), toolCallID: call.id },
        payload: { outcome: "succeeded", content_blocks: text("green") }
      })
      yield* rt.idle(waitingAgent.id)
      const events = yield* rt.events(waitingAgent.id)
      expect(events.map((event) => event.event_kind)).toEqual([
        "agent_input",
        "turn",
        "tool_call",
        "tool_result",
        "model_output",
        "turn"
      ])
      expect(events[5]).toMatchObject({ turn_status: "completed" })
      const requests = (yield* provider.requests).filter((request) => request.body?.model === rt.slug)
      expect(requests).toHaveLength(3)

      // The pruned turn's agent takes its next input as before.
      yield* provider.script([Reply.text("Again.")], { model: rt.slug })
      yield* rt.send(finishedAgent.id, "Once more")
      yield* rt.idle(finishedAgent.id)
      const again = yield* rt.events(finishedAgent.id)
      expect(again.map((event) => event.event_kind)).toEqual([
        "agent_input",
        "turn",
        "model_output",
        "turn",
        "agent_input",
        "turn",
        "model_output",
        "turn"
      ])
      expect(again.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    }))

  it.effect("the journal of a waiting turn deleted with its project goes", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      yield* provider.script([Reply.toolCall("lookup", { query: "status" })], { model: rt.slug })
      const agent = yield* rt.launch()
      const accepted = yield* rt.send(agent.id, "Check the status")
      yield* rt.waiting(agent.id)
      const turn = { turn_id: accepted.event.turn_id as TurnId, agent_id: agent.id }
      const rows = yield* settledJournalRows(turn)
      yield* prune(Duration.zero)
      expect(yield* journalRows(turn)).toEqual(rows)

      yield* rt.client.projects.remove({ params: rt.projectPath })
      yield* prune(Duration.zero)
      expect(yield* journalRows(turn)).toEqual({ messages: 0, replies: 0 })
    }))
})
