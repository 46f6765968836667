/**
 * The `agent_inputs` table: every input an agent was sent, its turn's id, and, under an
 * idempotency key, the hash of the request and the first answer it got.
 */
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Context, Effect, Layer, Schema, Struct } from "effect"
import { AgentId, InputId, TurnId } from "../../domain/shared/Ids.ts"
import { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import { AgentInput, InputStatus } from "../../domain/runtime/Inputs.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { insertGuarded } from "../shared/Sql.ts"

export const Disposition = Schema.Literals(["started", "queued"])
export type Disposition = typeof Disposition.Type

/** An input as stored: the AgentInput, the hash of its request and the answer it first got. */
const StoredInput = Schema.Struct({
  ...AgentInput.fields,
  request_hash: Schema.String,
  disposition: Disposition
})
type StoredInput = typeof StoredInput.Type

const NewInput = Schema.Struct({
  ...Struct.omit(StoredInput.fields, ["created_at"]),
  content_blocks: Schema.Array(ContentBlock)
})

/** A queued input, as the turn that starts it needs it. */
export const QueuedInput = Schema.Struct({ id: InputId, turn_id: TurnId })
export type QueuedInput = typeof QueuedInput.Type

const COLUMNS = "id, agent_id, turn_id, status, event_sequence, content_blocks, actor_id, " +
  "idempotency_key AS input_idempotency_key, request_hash, disposition, created_at"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.unsafe(COLUMNS)

  const encodeNewInput = Schema.encodeEffect(NewInput)
  /** The input's row as inserted; only when `guard` holds a row, with one (insertGuarded). */
  const insertStatement = (
    { content_blocks, input_idempotency_key, ...input }: typeof NewInput.Encoded,
    guard: string | undefined
  ): Statement.Fragment => {
    const row = { ...input, idempotency_key: input_idempotency_key, content_blocks: JSON.stringify(content_blocks) }
    return guard === undefined ? sql`INSERT INTO agent_inputs ${sql.insert(row)}` : insertGuarded(sql, "agent_inputs", row, guard)
  }

  const byIdempotencyKey = SqlSchema.findOneOption({
    Request: Schema.Struct({ agentId: AgentId, key: Schema.String }),
    Result: StoredInput,
    execute: ({ agentId, key }) =>
      sql`SELECT ${columns} FROM agent_inputs WHERE agent_id = ${agentId} AND idempotency_key = ${key}`
  })

  const lock = SqlSchema.findOneOption({
    Request: Schema.Struct({ agentId: AgentId, id: InputId }),
    Result: StoredInput,
    execute: ({ agentId, id }) =>
      sql`SELECT ${columns} FROM agent_inputs WHERE id = ${id} AND agent_id = ${agentId} FOR UPDATE`
  })

  const setStatus = SqlSchema.void({
    Request: Schema.Struct({ id: InputId, status: InputStatus }),
    execute: ({ id, status }) => sql`UPDATE agent_inputs SET status = ${status} WHERE id = ${id}`
  })

  const oldestQueued = SqlSchema.findOneOption({
    Request: AgentId,
    Result: QueuedInput,
    execute: (agentId) =>
      sql`SELECT id, turn_id FROM agent_inputs WHERE agent_id = ${agentId} AND status = 'queued' ORDER BY id LIMIT 1`
  })

  const backlog = keysetQuery(sql, {
    filter: Schema.Struct({ agentId: AgentId }),
    result: AgentInput,
    select: ({ agentId }) => sql`SELECT ${columns} FROM agent_inputs WHERE agent_id = ${agentId} AND status = 'queued'`
  })

  const agentsWithQueued = SqlSchema.findAll({
    Request: Schema.Void,
    Result: Schema.Struct({ agent_id: AgentId }),
    execute: () => sql`SELECT DISTINCT agent_id FROM agent_inputs WHERE status = 'queued' ORDER BY agent_id`
  })

  return {
    /**
     * A new input, inserted by the statement of the append of its event (AppendPrelude): its
     * `new_input`; with `guard`, only when that common table expression holds a row.
     */
    insertBefore: (input: typeof NewInput.Type, guard?: string): Effect.Effect<Statement.Fragment> =>
      Effect.map(Effect.orDie(encodeNewInput(input)), (encoded) => sql`new_input AS (${insertStatement(encoded, guard)})`),
    /** The input recorded first under an idempotency key of the agent. */
    byIdempotencyKey: (agentId: AgentId, key: string) => Effect.orDie(byIdempotencyKey({ agentId, key })),
    /** The input of the agent, locked until the transaction ends. */
    lock: (agentId: AgentId, id: InputId) => Effect.orDie(lock({ agentId, id })),
    setStatus: (id: InputId, status: typeof InputStatus.Type) => Effect.orDie(setStatus({ id, status })),
    /** The queued input to run next. */
    oldestQueued: (agentId: AgentId) => Effect.orDie(oldestQueued(agentId)),
    /** Queued inputs, oldest (next to run) first. */
    backlog: (agentId: AgentId, keyset: Keyset) => backlog({ agentId }, keyset),
    /** The agents with queued inputs. */
    agentsWithQueued: Effect.map(Effect.orDie(agentsWithQueued(undefined)), (rows) => rows.map((row) => row.agent_id))
  } as const
})

export class AgentInputsRepository extends Context.Service<AgentInputsRepository, Effect.Success<typeof make>>()("AgentInputsRepository") {
  static readonly layer = Layer.effect(this, make)
}

