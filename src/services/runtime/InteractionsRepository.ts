/**
 * The `interactions` table: approvals and questions, with the token of the wait of the turn
 * that their resolution resolves.
 */
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Context, Effect, Layer, Schema, Struct } from "effect"
import { AgentConfigId, AgentId, InteractionId, ProjectId, ToolCallId, TurnId } from "../../domain/shared/Ids.ts"
import { Decision, Interaction, InteractionKind, InteractionStatus } from "../../domain/runtime/Interactions.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"

/** An interaction as stored: with the token of the wait its resolution resolves. */
export const StoredInteraction = Schema.Struct({ ...Interaction.fields, deferred_token: Schema.String })
export type StoredInteraction = typeof StoredInteraction.Type

/** The interaction as the API shows it. */

export const toInteraction = (stored: StoredInteraction) => new Interaction(Struct.omit(stored, ["deferred_token"]))

const NewInteraction = Schema.Struct({
  id: InteractionId,
  agent_id: AgentId,
  project_id: ProjectId,
  turn_id: TurnId,
  tool_call_id: ToolCallId,
  kind: InteractionKind,
  question: Schema.NullOr(Schema.String),
  deferred_token: Schema.String
})

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.void({
    Request: NewInteraction,
    execute: (interaction) => sql`INSERT INTO interactions ${sql.insert({ ...interaction, status: "pending" })}`
  })

  const closePending = SqlSchema.findAll({
    Request: TurnId,
    Result: StoredInteraction,
    execute: (turnId) => sql`
      UPDATE interactions SET status = 'closed', resolved_at = now()
      WHERE turn_id = ${turnId} AND status = 'pending'
      RETURNING *`
  })

  const findInProject = SqlSchema.findOneOption({
    Request: Schema.Struct({ projectId: ProjectId, id: InteractionId }),
    Result: Schema.Struct({ ...StoredInteraction.fields, agent_config_id: AgentConfigId }),
    execute: ({ id, projectId }) => sql`
      SELECT interactions.*, agents.agent_config_id FROM interactions JOIN agents ON agents.id = interactions.agent_id
      WHERE interactions.id = ${id} AND interactions.project_id = ${projectId}`
  })

  const lock = SqlSchema.findOneOption({
    Request: InteractionId,
    Result: StoredInteraction,
    execute: (id) => sql`SELECT * FROM interactions WHERE id = ${id} FOR UPDATE`
  })

  const resolve = SqlSchema.findOne({
    Request: Schema.Struct({
      id: InteractionId,
      decision: Decision,
      answer: Schema.NullOr(Schema.String),
      message: Schema.NullOr(Schema.String)
    }),
    Result: StoredInteraction,
    execute: ({ answer, decision, id, message }) => sql`
      UPDATE interactions SET status = 'resolved', decision = ${decision}, answer = ${answer}, message = ${message},
        resolved_at = now()
      WHERE id = ${id} RETURNING *`
  })

  const pageForAgent = keysetQuery(sql, {
    filter: Schema.Struct({ agentId: AgentId }),
    result: StoredInteraction,
    select: ({ agentId }) => sql`SELECT * FROM interactions WHERE agent_id = ${agentId}`
  })

  const pageForProject = keysetQuery(sql, {
    filter: Schema.Struct({ projectId: ProjectId, status: Schema.UndefinedOr(InteractionStatus) }),
    result: StoredInteraction,
    select: ({ projectId, status }) => sql`
        SELECT * FROM interactions WHERE project_id = ${projectId}
        ${status === undefined ? sql`` : sql`AND status = ${status}`}`
  })

  const resolvedWaits = SqlSchema.findAll({
    Request: Schema.Array(TurnId),
    Result: StoredInteraction,
    execute: (turnIds) =>
      turnIds.length === 0 ? Effect.succeed([]) : sql`
        SELECT * FROM interactions
        WHERE ${sql.in("turn_id", turnIds)} AND status = 'resolved' AND tool_call_id IS NOT NULL`
  })

  return {
    /** A new pending interaction about a tool call. */
    insert: (interaction: typeof NewInteraction.Type) => Effect.orDie(insert(interaction)),
    /** Closes the pending interactions of the turn; the ones it closed. */
    closePending: (turnId: TurnId) => Effect.orDie(closePending(turnId)),
    /** The interaction of the project, with the config its agent runs. */
    findInProject: (projectId: ProjectId, id: InteractionId) => Effect.orDie(findInProject({ projectId, id })),
    /** The interaction, locked until the transaction ends. */
    lock: (id: InteractionId) => Effect.orDie(lock(id)),
    resolve: (resolution: {
      readonly id: InteractionId
      readonly decision: typeof Decision.Type
      readonly answer: string | null
      readonly message: string | null
    }) => Effect.orDie(resolve(resolution)),
    pageForAgent: (agentId: AgentId, keyset: Keyset) => pageForAgent({ agentId }, keyset),
    pageForProject: (projectId: ProjectId, status: typeof InteractionStatus.Type | undefined, keyset: Keyset) =>
      pageForProject({ projectId, status }, keyset),
    /** A condition, for a statement of its own: an interaction of the turn is pending. */
    pendingInteractions: (turnId: TurnId): Statement.Fragment =>
      sql`EXISTS (SELECT 1 FROM interactions WHERE turn_id = ${turnId} AND status = 'pending')`,
    /** The resolved interactions about tool calls of these turns. */
    resolvedWaits: (turnIds: ReadonlyArray<TurnId>) => Effect.orDie(resolvedWaits(turnIds))
  } as const
})

export class InteractionsRepository extends Context.Service<InteractionsRepository, Effect.Success<typeof make>>()("InteractionsRepository") {
  static readonly layer = Layer.effect(this, make)
}
