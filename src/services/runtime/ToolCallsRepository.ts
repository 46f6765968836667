/**
 * The `tool_calls` table: each tool call a model made, its state, and the token of the wait that
 * its result resolves (custom tools).
 */
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Array as Arr, Context, Effect, Layer, Schema, Struct } from "effect"
import { AgentConfigId, AgentId, EventId, ProjectId, ToolCallId, TurnId } from "../../domain/shared/Ids.ts"
import { Timestamp } from "../../domain/shared/Timestamp.ts"
import { ToolCall, ToolCallState, ToolOutcome } from "../../domain/runtime/ToolCalls.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { PipelinedStatements } from "../shared/PipelinedStatements.ts"
import { insertGuarded, SqlFragment } from "../shared/Sql.ts"
import type { StatementLock } from "./AgentsRepository.ts"

/** A tool call as stored: its outcome and end as nullable columns, the event of its result, its wait's token. */
export const StoredToolCall = Schema.Struct({
  ...Struct.omit(ToolCall.fields, ["outcome", "completed_at"]),
  outcome: Schema.NullOr(ToolOutcome),
  completed_at: Schema.NullOr(Timestamp),
  result_event_id: Schema.NullOr(EventId),
  deferred_token: Schema.NullOr(Schema.String)
})
export type StoredToolCall = typeof StoredToolCall.Type

/** The tool call as the API shows it. */

export const toToolCall = ({ completed_at, deferred_token: _, outcome, result_event_id: __, ...call }: StoredToolCall) =>
  new ToolCall({
    ...call,
    ...(outcome === null ? {} : { outcome }),
    ...(completed_at === null ? {} : { completed_at })
  })

const NewToolCall = Schema.Struct({
  ...Struct.pick(ToolCall.fields, ["id", "agent_id", "turn_id", "provider_call_id", "name", "input", "type", "state"]),
  deferred_token: Schema.NullOr(Schema.String)
})
export type NewToolCall = typeof NewToolCall.Type

/** A call and the token of the wait it resolves. */
const Wait = Schema.Struct({ id: ToolCallId, deferred_token: Schema.NullOr(Schema.String) })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reads = yield* PipelinedStatements

  const encodeNewToolCalls = Schema.encodeEffect(Schema.NonEmptyArray(NewToolCall))

  /** The columns a call's completion sets; `completed_at` is the transaction's time, its result event's `created_at`. */
  const completion = (outcome: typeof ToolOutcome.Type, resultEventId: EventId) =>
    sql`state = 'completed', outcome = ${outcome}, result_event_id = ${resultEventId}, completed_at = now()`

  const setState = SqlSchema.void({
    Request: Schema.Struct({ id: ToolCallId, state: ToolCallState }),
    execute: ({ id, state }) => sql`UPDATE tool_calls SET state = ${state} WHERE id = ${id}`
  })

  const cancelOpen = SqlSchema.findAll({
    Request: TurnId,
    Result: Wait,
    execute: (turnId) => sql`
      UPDATE tool_calls SET state = 'cancelled', completed_at = now()
      WHERE turn_id = ${turnId} AND state IN ('awaiting_authorization', 'ready', 'running')
      RETURNING id, deferred_token`
  })

  const find = SqlSchema.findOneOption({
    Request: Schema.Struct({ agentId: AgentId, id: ToolCallId, lock: Schema.Boolean }),
    Result: StoredToolCall,
    execute: ({ agentId, id, lock }) =>
      sql`SELECT * FROM tool_calls WHERE id = ${id} AND agent_id = ${agentId} ${lock ? sql`FOR UPDATE` : sql``}`
  })

  const findInProject = SqlSchema.findOneOption({
    Request: Schema.Struct({ projectId: ProjectId, agentId: AgentId, id: ToolCallId }),
    Result: Schema.Struct({ ...StoredToolCall.fields, agent_config_id: AgentConfigId }),
    execute: ({ agentId, id, projectId }) =>
      reads.run((sql) => sql`
        SELECT tool_calls.*, agents.agent_config_id FROM tool_calls JOIN agents ON agents.id = tool_calls.agent_id
        WHERE tool_calls.id = ${id} AND tool_calls.agent_id = ${agentId} AND agents.project_id = ${projectId}`)
  })

  const findAfterLock = SqlSchema.findOneOption({
    Request: Schema.Struct({ lock: Schema.Struct({ with: Schema.Array(SqlFragment), name: Schema.String }), id: ToolCallId }),
    Result: StoredToolCall,
    execute: ({ id, lock }) => sql`
      WITH ${sql.csv(lock.with)}
      SELECT tool_calls.* FROM tool_calls, ${sql(lock.name)}
      WHERE tool_calls.id = ${id} AND tool_calls.agent_id = ${sql(lock.name)}.id
      FOR UPDATE OF tool_calls`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ agentId: AgentId }),
    result: StoredToolCall,
    select: ({ agentId }) => sql`SELECT * FROM tool_calls WHERE agent_id = ${agentId}`
  })

  const providerCallIds = SqlSchema.findAll({
    Request: Schema.Array(ToolCallId),
    Result: Schema.Struct({ id: ToolCallId, provider_call_id: Schema.String }),
    execute: (ids) =>
      ids.length === 0 ? Effect.succeed([]) : sql`SELECT id, provider_call_id FROM tool_calls WHERE ${sql.in("id", ids)}`
  })

  const completedWaits = SqlSchema.findAll({
    Request: Schema.Array(TurnId),
    Result: Wait,
    execute: (turnIds) =>
      turnIds.length === 0 ? Effect.succeed([]) : sql`
        SELECT id, deferred_token FROM tool_calls
        WHERE ${sql.in("turn_id", turnIds)} AND state = 'completed' AND deferred_token IS NOT NULL`
  })

  return {
    /**
     * New calls, inserted by the statement of the append of their events (AppendPrelude): its
     * `new_tool_calls`; with `guard`, only when that common table expression holds a row, with
     * one (insertGuarded): its `new_tool_call_1`, `new_tool_call_2`, ..., a call each.
     */
    insertBefore: (calls: Arr.NonEmptyReadonlyArray<NewToolCall>, guard?: string): Effect.Effect<Statement.Fragment> =>
      Effect.map(Effect.orDie(encodeNewToolCalls(calls)), (encoded) => {
        const rows = Arr.map(encoded, (call) => ({ ...call, input: JSON.stringify(call.input) }))
        return guard === undefined
          ? sql`new_tool_calls AS (INSERT INTO tool_calls ${sql.insert(rows)})`
          : sql.csv(rows.map((row, index) => sql`${sql(`new_tool_call_${index + 1}`)} AS (${insertGuarded(sql, "tool_calls", row, guard)})`))
      }),
    setState: (id: ToolCallId, state: ToolCallState) => Effect.orDie(setState({ id, state })),
    /**
     * The call completed with the outcome its result event records, by the statement of the
     * append of that event (AppendPrelude): its `completed_call`. The call's `completed_at` is the
     * transaction's time, its result event's `created_at`.
     */
    completeBefore: (id: ToolCallId, outcome: typeof ToolOutcome.Type, resultEventId: EventId): Statement.Fragment =>
      sql`completed_call AS (UPDATE tool_calls SET ${completion(outcome, resultEventId)} WHERE id = ${id})`,
    /**
     * The call, when it is an open call of the turn that `turn` (a common table expression of the
     * statement, TurnsRepository.lockActive) holds, locked: a `ready` custom call (it waits for a
     * client's result) or a `running` built-in call (for its machine's). Its `open_call` holds the
     * call's id then, no row else.
     */
    lockOpenBefore: (turn: string, id: ToolCallId, type: "custom" | "built_in"): Statement.Fragment =>
      sql`open_call AS MATERIALIZED (
        SELECT tool_calls.id FROM tool_calls, ${sql(turn)}
        WHERE tool_calls.id = ${id} AND tool_calls.turn_id = ${sql(turn)}.id
          AND tool_calls.type = ${type} AND tool_calls.state = ${type === "custom" ? "ready" : "running"}
        FOR UPDATE OF tool_calls
      )`,
    /**
     * The call completed as by `completeBefore`, by the statement of the append of its result's
     * event, once `after` (one of its common table expressions) holds a row: its `completed_call`
     * holds the call's id then, no row else (nothing completed).
     */
    completeAfter: (
      after: string,
      id: ToolCallId,
      outcome: typeof ToolOutcome.Type,
      resultEventId: EventId
    ): Statement.Fragment =>
      sql`completed_call AS (
        UPDATE tool_calls SET ${completion(outcome, resultEventId)} FROM ${sql(after)} WHERE tool_calls.id = ${id}
        RETURNING tool_calls.id
      )`,
    /** Cancels the calls of the turn that have not completed; their waits' tokens. */
    cancelOpen: (turnId: TurnId) => Effect.orDie(cancelOpen(turnId)),
    /** The call of the agent; `lock` holds it until the transaction ends. */
    find: (agentId: AgentId, id: ToolCallId, lock = false) => Effect.orDie(find({ agentId, id, lock })),
    /** The call of the agent of the project, with the config its agent runs. */
    findInProject: (projectId: ProjectId, agentId: AgentId, id: ToolCallId) =>
      Effect.orDie(findInProject({ projectId, agentId, id })),
    /**
     * The call of the agent, locked until the transaction ends, read by the statement that locks
     * the agent first (`agentLock`, AgentsRepository.lockFirstInProject).
     */
    findAfterLock: (agentLock: StatementLock, id: ToolCallId) => Effect.orDie(findAfterLock({ lock: agentLock, id })),
    page: (agentId: AgentId, keyset: Keyset) => page({ agentId }, keyset),
    /** The ids the provider gave these calls, by call id (none read when there are none). */
    providerCallIds: (ids: ReadonlyArray<ToolCallId>) =>
      Effect.map(Effect.orDie(providerCallIds(ids)), (rows) => rows.map((row) => [row.id, row.provider_call_id] as const)),
    /**
     * A condition, for a statement of its own: a call of the turn awaits its approval or its
     * result (other than `except`, which the same statement completes: its snapshot still has it open).
     */
    openCalls: (turnId: TurnId, except?: ToolCallId): Statement.Fragment =>
      sql`EXISTS (SELECT 1 FROM tool_calls WHERE turn_id = ${turnId} AND state IN ('awaiting_authorization', 'ready')
        ${except === undefined ? sql`` : sql`AND id <> ${except}`})`,
    /** The completed calls of these turns that the turn waited for (custom and machine calls), with their waits' tokens. */
    completedWaits: (turnIds: ReadonlyArray<TurnId>) => Effect.orDie(completedWaits(turnIds))
  } as const
})

export class ToolCallsRepository extends Context.Service<ToolCallsRepository, Effect.Success<typeof make>>()("ToolCallsRepository") {
  static readonly layer = Layer.effect(this, make)
}

