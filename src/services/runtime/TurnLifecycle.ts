/**
 * The transitions of turns and agents, shared by the runtime's API side and its workflow. Each
 * runs inside its caller's transaction, which has locked the agent row first (`lockAgent`): every
 * runtime transaction takes that lock before any other, so they serialize per agent and never
 * deadlock.
 *
 * An agent is `running` while its current turn works, `waiting` while that turn waits for a tool
 * result, an approval or an answer, `idle` with no current turn; a turn ending starts the oldest
 * queued input's turn in the same transaction, so an agent with a backlog is never idle.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { AgentId, InputId, TurnId } from "../../domain/shared/Ids.ts"
import type { AgentStatus } from "../../domain/runtime/Resources.ts"
import { Timeline } from "./Timeline.ts"

export interface LockedAgent {
  readonly status: AgentStatus
  readonly current_turn_id: TurnId | null
}

export type FinalTurnStatus = "completed" | "failed" | "cancelled"

export class TurnLifecycle extends Effect.Service<TurnLifecycle>()("TurnLifecycle", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const timeline = yield* Timeline

    /** Locks the agent row for the rest of the transaction; none when the agent does not exist. */
    const lockAgent = (agentId: AgentId) =>
      sql<LockedAgent>`SELECT status, current_turn_id FROM agents WHERE id = ${agentId} FOR UPDATE`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    /** Makes the input's turn the agent's current turn and records its start. */
    const startTurn = (agentId: AgentId, input: { readonly id: InputId; readonly turn_id: TurnId }) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO turns ${sql.insert({ id: input.turn_id, agent_id: agentId, input_id: input.id, status: "running" })}`
        yield* sql`UPDATE agent_inputs SET status = 'started' WHERE id = ${input.id}`
        yield* sql`
          UPDATE agents SET status = 'running', current_turn_id = ${input.turn_id}, updated_at = now()
          WHERE id = ${agentId}`
        yield* timeline.append(agentId, [{
          event_kind: "turn",
          turn_id: input.turn_id,
          is_opening_event: false,
          turn_status: "started",
          error: null,
          usage: null
        }])
      }).pipe(Effect.orDie)

    /** Starts the oldest queued input's turn, or leaves the agent idle; the turn started, if any. */
    const startNext = (agentId: AgentId) =>
      Effect.gen(function*() {
        const [next] = yield* sql<{ id: InputId; turn_id: TurnId }>`
          SELECT id, turn_id FROM agent_inputs WHERE agent_id = ${agentId} AND status = 'queued'
          ORDER BY id LIMIT 1`
        if (next === undefined) {
          yield* sql`
            UPDATE agents SET status = 'idle', current_turn_id = NULL, updated_at = now() WHERE id = ${agentId}`
          return Option.none<TurnId>()
        }
        yield* startTurn(agentId, next)
        return Option.some(next.turn_id)
      }).pipe(Effect.orDie)

    /**
     * Ends a running or waiting turn with its final status (and records it with the turn's token
     * usage), then starts the next queued input. Nothing when the turn had already ended.
     */
    const finishTurn = (agentId: AgentId, turnId: TurnId, status: FinalTurnStatus, error: string | null) =>
      Effect.gen(function*() {
        const [turn] = yield* sql<{
          input_tokens: string
          output_tokens: string
          cache_read_tokens: string
          cache_write_tokens: string
        }>`
          UPDATE turns SET status = ${status}, error = ${error}, completed_at = now()
          WHERE id = ${turnId} AND status IN ('running', 'waiting')
          RETURNING input_tokens, output_tokens, cache_read_tokens, cache_write_tokens`
        if (turn === undefined) return Option.none<TurnId>()
        yield* timeline.append(agentId, [{
          event_kind: "turn",
          turn_id: turnId,
          is_opening_event: false,
          turn_status: status,
          error,
          usage: {
            input_tokens: Number(turn.input_tokens),
            output_tokens: Number(turn.output_tokens),
            cache_read_tokens: Number(turn.cache_read_tokens),
            cache_write_tokens: Number(turn.cache_write_tokens)
          }
        }])
        return yield* startNext(agentId)
      }).pipe(Effect.orDie)

    /** Sets the turn (and its agent) to `waiting` while a call awaits approval, a result or an answer, else `running`. */
    const refreshStatus = (agentId: AgentId, turnId: TurnId) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ waiting: boolean }>`
          SELECT EXISTS (
            SELECT 1 FROM tool_calls WHERE turn_id = ${turnId} AND state IN ('awaiting_authorization', 'ready')
          ) OR EXISTS (
            SELECT 1 FROM interactions WHERE turn_id = ${turnId} AND status = 'pending'
          ) AS waiting`
        const status = row?.waiting === true ? "waiting" : "running"
        yield* sql`UPDATE turns SET status = ${status} WHERE id = ${turnId} AND status IN ('running', 'waiting')`
        yield* sql`
          UPDATE agents SET status = ${status}, updated_at = now()
          WHERE id = ${agentId} AND current_turn_id = ${turnId} AND status <> ${status}`
      }).pipe(Effect.orDie)

    return { lockAgent, startTurn, startNext, finishTurn, refreshStatus } as const
  })
}) {}
