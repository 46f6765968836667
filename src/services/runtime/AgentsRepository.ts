/**
 * The `agents` table. An agent row is the lock of its runtime state: every runtime transaction
 * takes it first (`lock`), and it holds the last sequence of the agent's timeline, which
 * AgentEventsRepository.append advances in the statement that inserts the events (setting the
 * agent's status and current turn there too when the append starts or ends a turn). It also
 * counts the agent's queued inputs, which triggers on `agent_inputs` keep (migration 0014).
 */
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { AgentConfigId, AgentId, OrgId, ProjectId, TurnId } from "../../domain/shared/Ids.ts"
import { Agent, AgentStatus } from "../../domain/runtime/Agents.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { insertGuarded, lockClause, SqlFragment } from "../shared/Sql.ts"
import { PipelinedStatements } from "../shared/PipelinedStatements.ts"
import type { AgentStatusWrite } from "./TurnsRepository.ts"

const NewAgent = Schema.Struct({
  id: AgentId,
  org_id: OrgId,
  project_id: ProjectId,
  agent_config_id: AgentConfigId,
  name: Schema.NullOr(Schema.String),
  metadata: Schema.Record(Schema.String, Schema.Unknown)
})

/** An agent's row: the agent with the number of its queued inputs and the last sequence of its timeline. */
export class StoredAgent extends Agent.extend<StoredAgent>("StoredAgent")({
  queued_inputs: Schema.Int,
  last_sequence: Schema.Int
}) {}

/** The fields of an agent's row that its runtime's writes change, with its id: what `lockUnchanged` guards on. */
export type AgentRuntimeState = Pick<StoredAgent, "id" | "last_sequence" | "current_turn_id" | "queued_inputs">

/** An agent's row as its lock read it: the reader's transaction holds the row until it ends. */
export type LockedAgent = StoredAgent

/**
 * The agent's lock taken by a statement of its own (the first writes of an AppendPrelude): its
 * common table expressions, and `name`, the one that holds the agent's id while its row is locked.
 */
export interface StatementLock {
  readonly with: ReadonlyArray<Statement.Fragment>
  readonly name: string
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reads = yield* PipelinedStatements

  const insert = SqlSchema.findOneOption({
    Request: Schema.Struct({ agent: NewAgent, project: SqlFragment }),
    Result: Agent,
    execute: ({ agent, project }) =>
      sql`WITH project AS MATERIALIZED (${project})
        ${insertGuarded(sql, "agents", { ...agent, metadata: JSON.stringify(agent.metadata) }, "project")}
        RETURNING *`
  })

  const findInProject = SqlSchema.findOneOption({
    Request: Schema.Struct({ projectId: ProjectId, id: AgentId }),
    Result: Agent,
    execute: ({ id, projectId }) => sql`SELECT * FROM agents WHERE id = ${id} AND project_id = ${projectId}`
  })

  const findById = SqlSchema.findOneOption({
    Request: AgentId,
    Result: Agent,
    execute: (id) => sql`SELECT * FROM agents WHERE id = ${id}`
  })

  const presentInProject = SqlSchema.findAll({
    Request: Schema.Struct({ projectId: ProjectId, ids: Schema.Array(AgentId) }),
    Result: Schema.Struct({ id: AgentId }),
    execute: ({ ids, projectId }) =>
      sql`SELECT id FROM agents WHERE project_id = ${projectId} AND id = ANY(${ids}::text[])`
  })

  const lastSequences = SqlSchema.findAll({
    Request: Schema.Array(AgentId),
    Result: Schema.Struct({ id: AgentId, last_sequence: Schema.Number }),
    execute: (ids) => sql`SELECT id, last_sequence FROM agents WHERE id = ANY(${ids}::text[])`
  })

  const lock = SqlSchema.findOneOption({
    Request: AgentId,
    Result: StoredAgent,
    execute: (id) => sql`SELECT * FROM agents WHERE id = ${id} FOR UPDATE`
  })

  const keepFromDeletion = SqlSchema.findOneOption({
    Request: AgentId,
    Result: Schema.Struct({ id: AgentId }),
    execute: (id) => sql`SELECT id FROM agents WHERE id = ${id} FOR KEY SHARE`
  })

  const lockAllInProject = SqlSchema.void({
    Request: ProjectId,
    execute: (projectId) => sql`SELECT id FROM agents WHERE project_id = ${projectId} ORDER BY id FOR UPDATE`
  })

  const rowInProject = SqlSchema.findOneOption({
    Request: Schema.Struct({ projectId: ProjectId, id: AgentId, lock: Schema.Literals(["none", "update"]) }),
    Result: StoredAgent,
    execute: ({ id, lock, projectId }) =>
      lock === "none"
        ? reads.run((sql) => sql`SELECT * FROM agents WHERE id = ${id} AND project_id = ${projectId}`)
        : sql`SELECT * FROM agents WHERE id = ${id} AND project_id = ${projectId} ${lockClause(sql, lock)}`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ projectId: ProjectId, status: Schema.UndefinedOr(AgentStatus) }),
    result: Agent,
    select: ({ projectId, status }) => sql`
        SELECT * FROM agents WHERE project_id = ${projectId}
        ${status === undefined ? sql`` : sql`AND status = ${status}`}`
  })

  const setCurrentTurn = SqlSchema.void({
    Request: Schema.Struct({ id: AgentId, turnId: Schema.NullOr(TurnId), status: AgentStatus }),
    execute: ({ id, status, turnId }) => sql`
      UPDATE agents SET status = ${status}, current_turn_id = ${turnId}, updated_at = now() WHERE id = ${id}`
  })

  const runningConfigs = SqlSchema.findAll({
    Request: Schema.Array(AgentConfigId),
    Result: Schema.Struct({ id: AgentId, agent_config_id: AgentConfigId }),
    execute: (configIds) =>
      configIds.length === 0
        ? Effect.succeed([])
        : sql`SELECT id, agent_config_id FROM agents WHERE ${sql.in("agent_config_id", configIds)} ORDER BY id`
  })

  return {
    /**
     * The agent inserted when `project` (ProjectsRepository.shareForLaunch, run first in the same
     * statement) finds its project, else none.
     */
    insert: (agent: typeof NewAgent.Type, project: Statement.Fragment) => Effect.orDie(insert({ agent, project })),
    findInProject: (projectId: ProjectId, id: AgentId) => Effect.orDie(findInProject({ projectId, id })),
    findById: (id: AgentId) => Effect.orDie(findById(id)),
    /** Which of these agents are (still) in the project. */
    presentInProject: (projectId: ProjectId, ids: ReadonlyArray<AgentId>) =>
      Effect.map(Effect.orDie(presentInProject({ projectId, ids })), (rows) => new Set(rows.map((row) => row.id))),
    /** The last sequence of each of these agents' timelines (an agent that does not exist is left out). */
    lastSequences: (ids: ReadonlyArray<AgentId>) => Effect.orDie(lastSequences(ids)),
    /** The agent, locked until the transaction ends: every runtime transaction takes this lock first. */
    lock: (id: AgentId) => Effect.orDie(lock(id)),
    /**
     * The agent of the project locked by a statement that reads after the lock, until the
     * transaction ends, as `lock` locks it: its `agent` holds the agent's id, no row when the
     * agent is not in the project.
     */
    lockFirstInProject: (projectId: ProjectId, id: AgentId): StatementLock => ({
      name: "agent",
      with: [sql`agent AS MATERIALIZED (
        SELECT agents.id FROM agents WHERE agents.id = ${id} AND agents.project_id = ${projectId} FOR UPDATE OF agents
      )`]
    }),
    /**
     * The agent locked by a statement of its own until it ends, when its timeline has not grown
     * since the statement began (and, `idle`, it has no queued input): its `agent` holds the
     * agent's id then, no row else. The timeline's condition lets the statement number new events
     * from its snapshot: an append that committed since moved the last sequence. The lock does not
     * wait (NOWAIT): an agent a transaction holds fails the statement with lock_not_available,
     * which its append takes for a guard that did not hold (AgentEventsRepository.append).
     */
    lockTimelineUnchanged: (id: AgentId, { idle }: { readonly idle: boolean }): StatementLock => ({
      name: "agent",
      with: [
        sql`seen AS MATERIALIZED (SELECT last_sequence FROM agents WHERE id = ${id})`,
        sql`agent AS MATERIALIZED (
          SELECT agents.id FROM agents, seen
          WHERE agents.id = ${id} ${idle ? sql`AND agents.queued_inputs = 0` : sql``}
            AND agents.last_sequence = seen.last_sequence
          FOR UPDATE OF agents NOWAIT
        )`
      ]
    }),
    /**
     * The agent locked by a statement of its own until it ends, when its row is still as `agent`
     * was read (or remembered, KnownAgentRows): the same last sequence of its timeline, current
     * turn and queued inputs. Its `agent` holds the agent's id then, no row else. What was decided
     * on that read holds under the lock, and the statement may number new events after that last
     * sequence. The lock does not wait, as `lockTimelineUnchanged`'s.
     */
    lockUnchanged: (agent: AgentRuntimeState): StatementLock => ({
      name: "agent",
      with: [sql`agent AS MATERIALIZED (
        SELECT agents.id FROM agents
        WHERE agents.id = ${agent.id} AND agents.last_sequence = ${agent.last_sequence}
          AND agents.current_turn_id IS NOT DISTINCT FROM ${agent.current_turn_id}::text
          AND agents.queued_inputs = ${agent.queued_inputs}
        FOR UPDATE OF agents NOWAIT
      )`]
    }),
    /** The agent when it is in the project, locked as by `lock`. */
    lockInProject: (projectId: ProjectId, id: AgentId): Effect.Effect<Option.Option<LockedAgent>> =>
      Effect.orDie(rowInProject({ projectId, id, lock: "update" })),
    /**
     * Every agent of the project, locked as by `lock` until the transaction ends, one after
     * another in the order of their ids: what a deletion of the project takes first
     * (Projects.remove).
     */
    lockAllInProject: (projectId: ProjectId) => Effect.orDie(lockAllInProject(projectId)),
    /**
     * The agent's row shared until the transaction ends as a row referring to it shares it (FOR
     * KEY SHARE): a deletion (its project's, which locks it first) waits for the transaction, and
     * the transaction taking this first waits for a deletion under way. Whether the agent is there.
     */
    keepFromDeletion: (id: AgentId) => Effect.map(Effect.orDie(keepFromDeletion(id)), Option.isSome),
    /** The agent's row when it is in the project, read without a lock (`lockUnchanged` guards a statement on it). */
    rowInProject: (projectId: ProjectId, id: AgentId) => Effect.orDie(rowInProject({ projectId, id, lock: "none" })),
    page: (projectId: ProjectId, status: AgentStatus | undefined, keyset: Keyset) =>
      page({ projectId, status }, keyset),
    /** Makes `turnId` the agent's current turn (null: none) with `status`. */
    setCurrentTurn: (id: AgentId, turnId: TurnId | null, status: AgentStatus) =>
      Effect.orDie(setCurrentTurn({ id, turnId, status })),
    /**
     * Sets the status of the agent while `turnId` is its current turn to the one its turn's status
     * is set to, in the statement that sets the turn's (TurnsRepository.AgentStatusWrite): its `agent_status`.
     */
    statusFrom: (id: AgentId, turnId: TurnId): AgentStatusWrite => (source) => {
      const status = sql`${sql(source)}.status`
      return sql`agent_status AS (
        UPDATE agents SET status = ${status}, updated_at = now() FROM ${sql(source)}
        WHERE agents.id = ${id} AND agents.current_turn_id = ${turnId} AND agents.status <> ${status}
      )`
    },
    /** The agents that run one of these configs, oldest first. */
    runningConfigs: (configIds: ReadonlyArray<AgentConfigId>) => Effect.orDie(runningConfigs(configIds))
  } as const
})

export class AgentsRepository extends Context.Service<AgentsRepository, Effect.Success<typeof make>>()("AgentsRepository") {
  static readonly layer = Layer.effect(this, make)
}
