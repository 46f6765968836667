/** The `workspace_sessions` table: the sessions started in workspaces, each one an agent of the project. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { AgentConfigId, AgentId, MachineId, WorkspaceId, WorkspaceSessionId, WorktreeId } from "../../domain/shared/Ids.ts"
import { Timestamp } from "../../domain/shared/Timestamp.ts"

export const StoredSession = Schema.Struct({
  id: WorkspaceSessionId,
  workspace_id: WorkspaceId,
  worktree_id: WorktreeId,
  machine_id: MachineId,
  agent_id: AgentId,
  agent_config_id: AgentConfigId,
  resume_session_id: Schema.NullOr(Schema.String),
  metadata: Schema.Record(Schema.String, Schema.Unknown),
  created_at: Timestamp
})
export type StoredSession = typeof StoredSession.Type

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.findOne({
    Request: Schema.Struct({ ...StoredSession.fields, created_at: Schema.optional(Timestamp) }),
    Result: StoredSession,
    execute: (session) =>
      sql`INSERT INTO workspace_sessions ${sql.insert({ ...session, metadata: JSON.stringify(session.metadata) })} RETURNING *`
  })

  const find = SqlSchema.findOneOption({
    Request: Schema.Struct({ workspaceId: WorkspaceId, id: WorkspaceSessionId }),
    Result: StoredSession,
    execute: ({ id, workspaceId }) =>
      sql`SELECT * FROM workspace_sessions WHERE id = ${id} AND workspace_id = ${workspaceId}`
  })

  const byAgent = SqlSchema.findOneOption({
    Request: Schema.Struct({ workspaceId: WorkspaceId, agentId: AgentId }),
    Result: StoredSession,
    execute: ({ agentId, workspaceId }) =>
      sql`SELECT * FROM workspace_sessions WHERE agent_id = ${agentId} AND workspace_id = ${workspaceId}
          ORDER BY id DESC LIMIT 1`
  })

  const latestOfWorktree = SqlSchema.findOneOption({
    Request: WorktreeId,
    Result: StoredSession,
    execute: (worktreeId) => sql`SELECT * FROM workspace_sessions WHERE worktree_id = ${worktreeId} ORDER BY id DESC LIMIT 1`
  })

  /**
   * The agents of the worktree's sessions with a turn or a queued input, their rows locked for
   * share: a transaction sending an input to one of them (which locks its row) is waited for,
   * so a turn it starts is seen here.
   */
  const busy = SqlSchema.findAll({
    Request: WorktreeId,
    Result: Schema.Struct({ id: AgentId }),
    execute: (worktreeId) => sql`
      SELECT a.id FROM workspace_sessions s JOIN agents a ON a.id = s.agent_id
      WHERE s.worktree_id = ${worktreeId} AND (a.current_turn_id IS NOT NULL OR a.queued_inputs > 0)
      FOR SHARE OF a`
  })

  /** The worktree of a session of the agent that a migration holds now. */
  const migratingOfAgent = SqlSchema.findOneOption({
    Request: AgentId,
    Result: Schema.Struct({ worktree_id: WorktreeId }),
    execute: (agentId) => sql`
      SELECT w.id AS worktree_id FROM workspace_sessions s JOIN worktrees w ON w.id = s.worktree_id
      WHERE s.agent_id = ${agentId} AND w.migration_held_until > now() LIMIT 1`
  })

  return {
    insert: (session: Omit<StoredSession, "created_at">) => Effect.orDie(insert(session)),
    find: (workspaceId: WorkspaceId, id: WorkspaceSessionId) => Effect.orDie(find({ workspaceId, id })),
    byAgent: (workspaceId: WorkspaceId, agentId: AgentId) => Effect.orDie(byAgent({ workspaceId, agentId })),
    /** The worktree's most recent session. */
    latestOfWorktree: (worktreeId: WorktreeId) => Effect.orDie(latestOfWorktree(worktreeId)),
    /** Whether an agent of a session of the worktree is in a turn (or has an input waiting for one). */
    busy: (worktreeId: WorktreeId) => Effect.map(Effect.orDie(busy(worktreeId)), (rows) => rows.length > 0),
    /** The worktree a migration holds now of a session of the agent (docs/workspaces.md, "Migration"). */
    migratingOfAgent: (agentId: AgentId) =>
      Effect.map(Effect.orDie(migratingOfAgent(agentId)), (row) => Option.map(row, (found) => found.worktree_id))
  } as const
})

export class WorkspaceSessionsRepository extends Context.Service<WorkspaceSessionsRepository, Effect.Success<typeof make>>()("WorkspaceSessionsRepository") {
  static readonly layer = Layer.effect(this, make)
}
