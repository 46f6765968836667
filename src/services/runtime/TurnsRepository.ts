/**
 * The `turns` table and its `turn_steps`: a turn's status, token usage and timing, and the
 * recorded outcome of each of its completed model calls (docs/runtime.md, "Durability"). A model
 * step's first read joins the turn's agent (`stepState`).
 */
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { AgentId, InputId, TurnId } from "../../domain/shared/Ids.ts"
import { Agent } from "../../domain/runtime/Agents.ts"
import { TokenUsage } from "../../domain/runtime/Events.ts"
import { Turn, TurnStatus } from "../../domain/runtime/Turns.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { insertGuarded, SqlFragment } from "../shared/Sql.ts"
import type { AppendPrelude, PreludeGuard } from "./AgentEventsRepository.ts"
import type { StatementLock } from "./AgentsRepository.ts"
import { StepOutcome } from "./TurnWorkflow.ts"
import { PipelinedStatements } from "../shared/PipelinedStatements.ts"

/** A turn as stored: its usage in four columns, its duration not kept. */
const StoredTurn = Schema.Struct({ ...Struct.omit(Turn.fields, ["usage", "duration_ms"]), ...TokenUsage.fields })
type StoredTurn = typeof StoredTurn.Type

const usageOf = (row: TokenUsage): TokenUsage => ({
  input_tokens: row.input_tokens,
  output_tokens: row.output_tokens,
  cache_read_tokens: row.cache_read_tokens,
  cache_write_tokens: row.cache_write_tokens
})

const toTurn = (row: StoredTurn) =>
  new Turn({
    id: row.id,
    agent_id: row.agent_id,
    input_id: row.input_id,
    status: row.status,
    error: row.error,
    model_calls: row.model_calls,
    usage: usageOf(row),
    started_at: row.started_at,
    completed_at: row.completed_at,
    duration_ms: row.completed_at === null ? null : row.completed_at.getTime() - row.started_at.getTime()
  })

/** What a model step reads first: its turn's state, its recorded outcome if any, the agent. */
const StepState = Schema.Struct({
  agent: Agent,
  last_sequence: Schema.Number,
  active: Schema.Boolean,
  outcome: Schema.NullOr(StepOutcome)
})

/** The statuses of a turn that has not ended. */
const ACTIVE = ["running", "waiting"] as const

/**
 * The agent's status set to its turn's new one, by a common table expression of the statement
 * that sets the turn's: `source` names the one that holds the turn's new `status`
 * (AgentsRepository.statusFrom).
 */
export type AgentStatusWrite = (source: string) => Statement.Fragment

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reads = yield* PipelinedStatements
  const active = sql`status IN ${sql.in(ACTIVE)}`

  const NewTurn = Schema.Struct({ id: TurnId, agent_id: AgentId, input_id: InputId })
  const rowOf = (turn: typeof NewTurn.Encoded) => ({ ...turn, status: "running" })
  const insertStatement = (turn: typeof NewTurn.Encoded) => sql`INSERT INTO turns ${sql.insert(rowOf(turn))}`
  const insert = SqlSchema.void({ Request: NewTurn, execute: insertStatement })

  const find = SqlSchema.findOneOption({
    Request: Schema.Struct({ agentId: AgentId, id: TurnId }),
    Result: StoredTurn,
    execute: ({ agentId, id }) => sql`SELECT * FROM turns WHERE id = ${id} AND agent_id = ${agentId}`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ agentId: AgentId }),
    result: StoredTurn,
    select: ({ agentId }) => sql`SELECT * FROM turns WHERE agent_id = ${agentId}`
  })

  const isActive = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: TurnId, lock: Schema.Boolean }),
    Result: Schema.Struct({ active: Schema.Boolean }),
    execute: ({ id, lock }) =>
      sql`SELECT ${active} AS active FROM turns WHERE id = ${id} ${lock ? sql`FOR UPDATE` : sql``}`
  })

  const activeAmong = SqlSchema.findAll({
    Request: Schema.Array(TurnId),
    Result: Schema.Struct({ id: TurnId }),
    execute: (ids) => sql`SELECT id FROM turns WHERE id = ANY(${ids}::text[]) AND ${active}`
  })

  /** A step's row, unless the step was recorded already: its `step` returned when it is new. */
  const insertStep = (turnId: string, step: number, outcome: typeof StepOutcome.Encoded) =>
    sql`INSERT INTO turn_steps ${sql.insert({ turn_id: turnId, step, outcome: JSON.stringify(outcome) })}
      ON CONFLICT DO NOTHING RETURNING step`

  const finish = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: TurnId, status: TurnStatus, error: Schema.NullOr(Schema.String) }),
    Result: TokenUsage,
    execute: (turn) => sql`
      UPDATE turns SET status = ${turn.status}, error = ${turn.error}, completed_at = now()
      WHERE id = ${turn.id} AND ${active}
      RETURNING input_tokens, output_tokens, cache_read_tokens, cache_write_tokens`
  })

  /** The columns that count a model call with its usage. */
  const countedCall = (call: TokenUsage) =>
    sql`model_calls = turns.model_calls + 1,
      input_tokens = turns.input_tokens + ${call.input_tokens},
      output_tokens = turns.output_tokens + ${call.output_tokens},
      cache_read_tokens = turns.cache_read_tokens + ${call.cache_read_tokens},
      cache_write_tokens = turns.cache_write_tokens + ${call.cache_write_tokens}`

  /** The columns a turn's completion by its last model call sets: its status, and the call counted with its usage. */
  const completedBy = (lastCall: TokenUsage) =>
    sql`status = ${"completed"}, error = NULL, completed_at = now(), ${countedCall(lastCall)}`

  /**
   * `turn`, the turn locked when it has not ended (`locked` are other common table expressions
   * whose rows it takes: a lock taken first).
   */
  const lockedTurn = (id: string, locked: ReadonlyArray<string>) =>
    sql`turn AS MATERIALIZED (
      SELECT turns.id FROM ${sql.csv([sql`turns`, ...locked.map((name) => sql`${sql(name)}`)])}
      WHERE turns.id = ${id} AND turns.status IN ${sql.in(ACTIVE)} FOR UPDATE OF turns
    )`

  /**
   * `turn`, the turn locked when it has not ended (`lockedTurn`); `recorded`, the step's row made
   * for it, unless the step was recorded already.
   */
  const lockedTurnAndStep = (id: string, step: number, outcome: string, locked: ReadonlyArray<string> = []) => [
    lockedTurn(id, locked),
    sql`recorded AS (
      INSERT INTO turn_steps (turn_id, step, outcome) SELECT turn.id, ${step}::int, ${outcome}::jsonb FROM turn
      ON CONFLICT DO NOTHING RETURNING turn_id
    )`
  ]

  /**
   * `refreshed`, a row for each of `from`'s (none: one) with the status of a turn that has not
   * ended: `waiting` when one of `waitsFor` holds, else `running`.
   */
  const refreshed = (waitsFor: ReadonlyArray<Statement.Fragment>, from?: string) =>
    sql`refreshed AS MATERIALIZED (
      SELECT CASE WHEN ${sql.or(waitsFor)} THEN 'waiting' ELSE 'running' END AS status
      ${from === undefined ? sql`` : sql`FROM ${sql(from)}`}
    )`

  const refreshStatus = SqlSchema.void({
    Request: Schema.Struct({ id: TurnId, waitsFor: Schema.Array(SqlFragment), agentStatus: SqlFragment }),
    execute: ({ agentStatus, id, waitsFor }) => sql`
      WITH ${refreshed(waitsFor)}, ${agentStatus}
      UPDATE turns SET status = refreshed.status FROM refreshed
      WHERE turns.id = ${id} AND turns.status IN ${sql.in(ACTIVE)}`
  })

  const recordCallsStep = SqlSchema.findOne({
    Request: Schema.Struct({
      id: TurnId,
      step: Schema.Int,
      outcome: StepOutcome,
      ...TokenUsage.fields,
      waitsFor: Schema.Array(SqlFragment),
      agentStatus: SqlFragment
    }),
    Result: Schema.Struct({ active: Schema.Boolean, recorded: Schema.Boolean }),
    execute: (call) => sql`
      WITH ${sql.csv(lockedTurnAndStep(call.id, call.step, JSON.stringify(call.outcome)))},
        ${refreshed(call.waitsFor, "recorded")},
        turn_status AS (
          UPDATE turns SET status = refreshed.status, ${countedCall(call)} FROM refreshed WHERE turns.id = ${call.id}
        ),
        ${call.agentStatus}
      SELECT EXISTS (SELECT 1 FROM turn) AS active, EXISTS (SELECT 1 FROM recorded) AS recorded`
  })

  /**
   * A last model call's `turn_steps` row, and the turn completed with the call's usage, in one
   * statement: the turn is updated only when the row is new.
   */
  const complete = SqlSchema.findOne({
    Request: Schema.Struct({ id: TurnId, step: Schema.Int, outcome: StepOutcome, ...TokenUsage.fields }),
    Result: Schema.Struct({ recorded: Schema.Boolean, completed: Schema.Boolean, ...TokenUsage.fields }),
    execute: (turn) => sql`
      WITH recorded AS (${insertStep(turn.id, turn.step, turn.outcome)}), completed AS (
        UPDATE turns SET ${completedBy(turn)}
        WHERE id = ${turn.id} AND ${active} AND EXISTS (SELECT 1 FROM recorded)
        RETURNING input_tokens, output_tokens, cache_read_tokens, cache_write_tokens
      )
      SELECT EXISTS (SELECT 1 FROM recorded) AS recorded, completed.input_tokens IS NOT NULL AS completed,
        COALESCE(completed.input_tokens, 0) AS input_tokens, COALESCE(completed.output_tokens, 0) AS output_tokens,
        COALESCE(completed.cache_read_tokens, 0) AS cache_read_tokens,
        COALESCE(completed.cache_write_tokens, 0) AS cache_write_tokens
      FROM (SELECT 1) AS one LEFT JOIN completed ON true`
  })

  const addUsage = SqlSchema.void({
    Request: Schema.Struct({ id: TurnId, modelCalls: Schema.Int, ...TokenUsage.fields }),
    execute: (usage) => sql`
      UPDATE turns SET model_calls = model_calls + ${usage.modelCalls},
        input_tokens = input_tokens + ${usage.input_tokens}, output_tokens = output_tokens + ${usage.output_tokens},
        cache_read_tokens = cache_read_tokens + ${usage.cache_read_tokens},
        cache_write_tokens = cache_write_tokens + ${usage.cache_write_tokens}
      WHERE id = ${usage.id}`
  })

  const unfinished = SqlSchema.findAll({
    Request: Schema.Void,
    Result: Schema.Struct({ id: TurnId, agent_id: AgentId }),
    execute: () => sql`SELECT id, agent_id FROM turns WHERE ${active} ORDER BY id`
  })

  const recordedStep = SqlSchema.findOneOption({
    Request: Schema.Struct({ turnId: TurnId, step: Schema.Int }),
    Result: Schema.Struct({ outcome: StepOutcome }),
    execute: ({ step, turnId }) => sql`SELECT outcome FROM turn_steps WHERE turn_id = ${turnId} AND step = ${step}`
  })

  // Deleting an agent deletes its turns, so a turn found has its agent.
  const stepState = SqlSchema.findOneOption({
    Request: Schema.Struct({ turnId: TurnId, step: Schema.Int }),
    Result: StepState,
    execute: ({ step, turnId }) =>
      Effect.map(
        reads.run((sql) =>
          sql<{ readonly last_sequence: number; readonly turn_active: boolean; readonly step_outcome: unknown }>`
            SELECT agents.*, turns.status IN ${sql.in(ACTIVE)} AS turn_active, turn_steps.outcome AS step_outcome
            FROM turns
              JOIN agents ON agents.id = turns.agent_id
              LEFT JOIN turn_steps ON turn_steps.turn_id = turns.id AND turn_steps.step = ${step}
            WHERE turns.id = ${turnId}`
        ),
        (rows) =>
          rows.map((row) => ({
            agent: row,
            last_sequence: row.last_sequence,
            active: row.turn_active,
            outcome: row.step_outcome
          }))
      )
  })

  const finished = JSON.stringify(Schema.encodeSync(StepOutcome)({ _tag: "Finished" }))

  /**
   * The prelude of the append that ends a turn with its last model call, its `step`-th, in one
   * statement of its own, guarded by its `completed` (AppendPrelude; docs/runtime.md, "A turn's
   * end in one statement"). After the agent's lock, `agent` (AgentsRepository.lockTimelineUnchanged:
   * every runtime transaction takes it first), it locks the turn, when it still runs; records the
   * step as `Finished`, unless it was recorded already; and completes the turn with the call's
   * usage. Its `completed` holds the turn's usage when all of that happened, and no row when any
   * did not (the agent's lock not taken among them): then nothing was written.
   */
  const lastStepGuard = (
    agent: StatementLock,
    turnId: TurnId,
    step: number,
    lastCall: TokenUsage
  ): AppendPrelude => ({
    guard: { name: "completed", turnUsage: true },
    with: [
      ...agent.with,
      ...lockedTurnAndStep(turnId, step, finished, [agent.name]),
      sql`completed AS (
        UPDATE turns SET ${completedBy(lastCall)} FROM recorded WHERE turns.id = recorded.turn_id
        RETURNING jsonb_build_object(
          'input_tokens', turns.input_tokens, 'output_tokens', turns.output_tokens,
          'cache_read_tokens', turns.cache_read_tokens, 'cache_write_tokens', turns.cache_write_tokens
        ) AS usage
      )`
    ]
  })

  /**
   * The prelude of the append that records a model call's tool calls, its `step`-th, when every
   * call is dispatched with its row alone (custom tools and machine tools that need no approval:
   * ToolDispatch.dispatchedWithItsRow), in one statement of its own, guarded by its `stepped`
   * (AppendPrelude; docs/runtime.md, "A step's tool calls in one statement"). After the agent's
   * lock, `agent` (AgentsRepository.lockTimelineUnchanged), it locks the turn, when it still runs;
   * records the step with its `outcome`, unless it was recorded already; and sets the turn's
   * `status` (`waiting` for a client's result, `running` while machines run the calls), the call
   * counted with its usage. Its `stepped` holds the turn's id when all of that happened, and no row
   * when any did not: then nothing was written. The calls' rows (and their machine requests) are
   * the caller's to add, guarded by `stepped` too.
   */
  const callsStepGuard = (
    agent: StatementLock,
    turnId: TurnId,
    step: number,
    outcome: StepOutcome,
    call: TokenUsage,
    status: "running" | "waiting"
  ): AppendPrelude & { readonly guard: PreludeGuard } => ({
    guard: { name: "stepped", turnUsage: false },
    with: [
      ...agent.with,
      ...lockedTurnAndStep(turnId, step, JSON.stringify(Schema.encodeSync(StepOutcome)(outcome)), [agent.name]),
      sql`stepped AS (
        UPDATE turns SET status = ${status}, ${countedCall(call)} FROM recorded WHERE turns.id = recorded.turn_id
        RETURNING turns.id
      )`
    ]
  })

  return {
    /** A new running turn. */
    insert: (turn: typeof NewTurn.Type) => Effect.orDie(insert(turn)),
    /**
     * A new running turn, inserted by the statement of an append (AppendPrelude): its `new_turn`;
     * with `guard`, only when that common table expression holds a row.
     */
    insertBefore: (turn: typeof NewTurn.Type, guard?: string): Statement.Fragment =>
      sql`new_turn AS (${guard === undefined ? insertStatement(turn) : insertGuarded(sql, "turns", rowOf(turn), guard)})`,
    find: (agentId: AgentId, id: TurnId) => Effect.map(Effect.orDie(find({ agentId, id })), Option.map(toTurn)),
    page: (agentId: AgentId, keyset: Keyset) =>
      Effect.map(page({ agentId }, keyset), (rows) => rows.map(toTurn)),
    /** Whether the turn is running or waiting; `lock` holds its row until the transaction ends. */
    isActive: (id: TurnId, lock = false) =>
      Effect.map(Effect.orDie(isActive({ id, lock })), (row) => Option.isSome(row) && row.value.active),
    /** Which of these turns are running or waiting. */
    activeAmong: (ids: ReadonlyArray<TurnId>) =>
      Effect.map(Effect.orDie(activeAmong(ids)), (rows) => new Set(rows.map((row) => row.id))),
    /** Ends a running or waiting turn with its final status; its token usage, or none when it had ended already. */
    finish: (id: TurnId, status: TurnStatus, error: string | null) => Effect.orDie(finish({ id, status, error })),
    /**
     * Records the outcome of the turn's last model call (its `step`-th) and completes the turn
     * with the call's usage. `recorded` is false when that step was recorded already (nothing is
     * written then); `usage` is the turn's token usage, none when the turn had ended already
     * (the step's row is written then: the caller's transaction rolls it back).
     */
    complete: (id: TurnId, step: number, outcome: StepOutcome, lastCall: TokenUsage) =>
      Effect.map(Effect.orDie(complete({ id, step, outcome, ...usageOf(lastCall) })), (row) => ({
        recorded: row.recorded,
        usage: row.completed ? Option.some(usageOf(row)) : Option.none()
      })),
    lastStepGuard,
    callsStepGuard,
    /**
     * The turn locked by a statement of its own while it has not ended, after the locks of
     * `locked` (other common table expressions whose rows it takes): its `turn` holds the turn's
     * id then, no row else.
     */
    lockActive: (id: TurnId, locked: ReadonlyArray<string>): Statement.Fragment => lockedTurn(id, locked),
    /**
     * The status of a turn that has not ended set by the statement of an append (AppendPrelude)
     * once `after`, one of its common table expressions, holds a row: `waiting` when one of
     * `waitsFor` holds, `running` else. Its `refreshed` holds that status then (which the append
     * gives the agent: PreludeGuard.agentStatus), no row else.
     */
    statusRefreshedAfter: (id: TurnId, waitsFor: ReadonlyArray<Statement.Fragment>, after: string) => [
      refreshed(waitsFor, after),
      sql`turn_status AS (
        UPDATE turns SET status = refreshed.status FROM refreshed WHERE turns.id = ${id} AND turns.status IN ${sql.in(ACTIVE)}
      )`
    ],
    /**
     * Sets the status of a turn that has not ended, in one statement with the agent's
     * (`agentStatus`): `waiting` when one of `waitsFor` holds, `running` else.
     */
    refreshStatus: (id: TurnId, waitsFor: ReadonlyArray<Statement.Fragment>, agentStatus: AgentStatusWrite) =>
      Effect.orDie(refreshStatus({ id, waitsFor, agentStatus: agentStatus("refreshed") })),
    /**
     * Records the outcome of the turn's `step`-th model call, which made tool calls, when the turn
     * has not ended: in one statement, the turn locked, the step's row, the call counted with its
     * usage, and the turn's status set with the agent's as `refreshStatus` sets them. `active` is
     * false when the turn had ended, and `recorded` when the step was recorded already: nothing
     * is written then.
     */
    recordCallsStep: (
      id: TurnId,
      step: number,
      outcome: StepOutcome,
      call: TokenUsage,
      waitsFor: ReadonlyArray<Statement.Fragment>,
      agentStatus: AgentStatusWrite
    ) =>
      Effect.orDie(
        recordCallsStep({ id, step, outcome, ...usageOf(call), waitsFor, agentStatus: agentStatus("refreshed") })
      ),
    addUsage: (id: TurnId, usage: TokenUsage, modelCalls: number) =>
      Effect.orDie(addUsage({ id, modelCalls, ...usageOf(usage) })),
    /** Counts a model call that failed (after its retries): one call, no tokens. */
    addFailedCall: (id: TurnId) =>
      Effect.orDie(
        addUsage({ id, modelCalls: 1, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 })
      ),
    /** The running and waiting turns, oldest first. */
    unfinished: Effect.orDie(unfinished(undefined)),
    /** The recorded outcome of the turn's `step`-th model call. */
    recordedStep: (turnId: TurnId, step: number) =>
      Effect.map(Effect.orDie(recordedStep({ turnId, step })), Option.map((row) => row.outcome)),
    /**
     * In one read, at the start of the turn's `step`-th model call: whether the turn still runs
     * (or waits), that step's outcome when it was recorded already, and the turn's agent with
     * the last sequence of its timeline. None when the turn is gone (its agent was deleted).
     */
    stepState: (turnId: TurnId, step: number) =>
      Effect.map(Effect.orDie(stepState({ turnId, step })), Option.map((row) => ({
        agent: row.agent,
        lastSequence: row.last_sequence,
        active: row.active,
        recorded: Option.fromNullishOr(row.outcome)
      }))),
  } as const
})

export class TurnsRepository extends Context.Service<TurnsRepository, Effect.Success<typeof make>>()("TurnsRepository") {
  static readonly layer = Layer.effect(this, make)
}
