/**
 * Agents and what the API reads of their runtime state (docs/agents-api.md): launching an agent
 * row, and listing agents, backlogs, turns, tool calls, interactions and timeline pages. Every
 * read checks the caller's access to the project and that the resource belongs to it (else
 * `not_found`). Mutations after launch go through the engine (AgentRuntime, via AgentCommands).
 */
import { PgClient } from "@effect/sql-pg"
import { Chunk, Duration, Effect, Option, Schema, Stream } from "effect"
import { InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import type {
  ActorId,
  AgentConfigId,
  InputId,
  InteractionId,
  OrgId,
  ProjectId,
  ToolCallId,
  TurnId
} from "../../domain/shared/Ids.ts"
import { AgentId } from "../../domain/shared/Ids.ts"
import { type ListQuery, toPage } from "../../domain/shared/Pagination.ts"
import type { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import { AgentEvent, type EventsQuery } from "../../domain/runtime/Events.ts"
import {
  Agent,
  AgentInput,
  type AgentStatus,
  Interaction,
  Turn
} from "../../domain/runtime/Resources.ts"
import { Access } from "../tenancy/Access.ts"
import { pageRequest } from "../shared/Paging.ts"
import { firstOr } from "../shared/Sql.ts"
import { type InteractionRow, toInteraction, toToolCall, type ToolCallRow } from "./RuntimeRows.ts"
import { Timeline } from "./Timeline.ts"

interface AgentRow {
  readonly id: AgentId
  readonly org_id: OrgId
  readonly project_id: ProjectId
  readonly agent_config_id: AgentConfigId
  readonly name: string | null
  readonly metadata: Record<string, unknown>
  readonly status: AgentStatus
  readonly current_turn_id: TurnId | null
  readonly created_at: Date
  readonly updated_at: Date
}

interface InputRow {
  readonly id: InputId
  readonly agent_id: AgentId
  readonly turn_id: TurnId
  readonly status: AgentInput["status"]
  readonly event_sequence: string | number
  readonly content_blocks: ReadonlyArray<ContentBlock>
  readonly actor_id: ActorId | null
  readonly idempotency_key: string | null
  readonly request_hash: string
  readonly created_at: Date
}

interface TurnRow {
  readonly id: TurnId
  readonly agent_id: AgentId
  readonly input_id: InputId
  readonly status: Turn["status"]
  readonly error: string | null
  readonly model_calls: number
  readonly input_tokens: string | number
  readonly output_tokens: string | number
  readonly cache_read_tokens: string | number
  readonly cache_write_tokens: string | number
  readonly started_at: Date
  readonly completed_at: Date | null
}

const toAgent = (row: AgentRow) =>
  new Agent({
    id: row.id,
    org_id: row.org_id,
    project_id: row.project_id,
    agent_config_id: row.agent_config_id,
    name: row.name,
    metadata: row.metadata,
    status: row.status,
    current_turn_id: row.current_turn_id,
    created_at: row.created_at,
    updated_at: row.updated_at
  })

const toInput = (row: InputRow) =>
  new AgentInput({
    id: row.id,
    agent_id: row.agent_id,
    turn_id: row.turn_id,
    status: row.status,
    event_sequence: Number(row.event_sequence),
    content_blocks: row.content_blocks,
    actor_id: row.actor_id,
    input_idempotency_key: row.idempotency_key,
    created_at: row.created_at
  })

const toTurn = (row: TurnRow) =>
  new Turn({
    id: row.id,
    agent_id: row.agent_id,
    input_id: row.input_id,
    status: row.status,
    error: row.error,
    model_calls: row.model_calls,
    usage: {
      input_tokens: Number(row.input_tokens),
      output_tokens: Number(row.output_tokens),
      cache_read_tokens: Number(row.cache_read_tokens),
      cache_write_tokens: Number(row.cache_write_tokens)
    },
    started_at: row.started_at,
    completed_at: row.completed_at,
    duration_ms: row.completed_at === null ? null : row.completed_at.getTime() - row.started_at.getTime()
  })

/** A Server-Sent Events stream sends this comment when no event came for this long. */
export const SSE_HEARTBEAT_INTERVAL = Duration.seconds(15)

const encodeEvent = Schema.encodeSync(Schema.parseJson(AgentEvent))

/** One event as a Server-Sent Event: `id:` its sequence, `event:` its kind, `data:` its JSON (one line). */
const toServerSentEvent = (event: AgentEvent) =>
  `id: ${event.sequence}\nevent: ${event.event_kind}\ndata: ${encodeEvent(event)}\n\n`

/** The input an idempotency key recorded first: its blocks as recorded and the hash of its request. */
export interface RecordedInput {
  readonly content_blocks: ReadonlyArray<ContentBlock>
  readonly request_hash: string
}

export class Agents extends Effect.Service<Agents>()("Agents", {
  effect: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const access = yield* Access
    const timeline = yield* Timeline

    const agentRow = (projectId: ProjectId, agentId: AgentId) =>
      sql<AgentRow>`SELECT * FROM agents WHERE id = ${agentId} AND project_id = ${projectId}`.pipe(
        Effect.orDie,
        Effect.flatMap(firstOr(() => new NotFound({ error: `Agent ${agentId} not found in project ${projectId}` })))
      )

    /** The agent, for a caller who may read its project. */
    const readAgent = (orgId: OrgId, projectId: ProjectId, agentId: AgentId) =>
      Effect.zipRight(access.projectAccess(orgId, projectId), Effect.map(agentRow(projectId, agentId), toAgent))

    /** The agent, for a caller who may act in its project (write access). */
    const writeAgent = (orgId: OrgId, projectId: ProjectId, agentId: AgentId) =>
      Effect.zipRight(
        access.requireProjectAccess(orgId, projectId, "write"),
        Effect.map(agentRow(projectId, agentId), toAgent)
      )

    /** A new idle agent running `agent_config_id`, which must be a config of the project. */
    const create = (
      orgId: OrgId,
      projectId: ProjectId,
      input: {
        readonly agent_config_id: AgentConfigId
        readonly name?: string | undefined
        readonly metadata?: Record<string, unknown> | undefined
      }
    ) =>
      Effect.gen(function*() {
        yield* access.requireProjectAccess(orgId, projectId, "write")
        const configs = yield* sql`
          SELECT id FROM agent_configs WHERE id = ${input.agent_config_id} AND project_id = ${projectId}`.pipe(
          Effect.orDie
        )
        if (configs.length === 0) {
          return yield* Effect.fail(
            new InvalidRequest({
              error: `agent_config_id: ${input.agent_config_id} is not an agent config of project ${projectId}`,
              issues: [{ path: "/agent_config_id", message: "no agent config with this id in the project" }]
            })
          )
        }
        const [row] = yield* sql<AgentRow>`
          INSERT INTO agents (id, org_id, project_id, agent_config_id, name, metadata)
          VALUES (${AgentId.make()}, ${orgId}, ${projectId}, ${input.agent_config_id}, ${input.name ?? null},
            ${sql.json(input.metadata ?? {})})
          RETURNING *`.pipe(Effect.orDie)
        return toAgent(row)
      })

    /** The agent as it is now (after the engine acted on it), for an answer. */
    const current = (projectId: ProjectId, agentId: AgentId) =>
      Effect.map(Effect.orDie(agentRow(projectId, agentId)), toAgent)

    const list = (orgId: OrgId, projectId: ProjectId, query: ListQuery & { readonly status?: AgentStatus | undefined }) =>
      Effect.gen(function*() {
        yield* access.projectAccess(orgId, projectId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<AgentRow>`
          SELECT * FROM agents
          WHERE project_id = ${projectId}
            ${query.status === undefined ? sql`` : sql`AND status = ${query.status}`}
            ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toAgent), limit, (agent) => agent.id)
      })

    /** The queued inputs of an agent, oldest (next to run) first. */
    const backlog = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* readAgent(orgId, projectId, agentId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<InputRow>`
          SELECT * FROM agent_inputs
          WHERE agent_id = ${agentId} AND status = 'queued' ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toInput), limit, (input) => input.id)
      })

    /** The input recorded first under an idempotency key of the agent, if any. */
    const inputByIdempotencyKey = (agentId: AgentId, key: string) =>
      sql<InputRow>`SELECT * FROM agent_inputs WHERE agent_id = ${agentId} AND idempotency_key = ${key}`.pipe(
        Effect.orDie,
        Effect.map((rows): RecordedInput | undefined => rows[0])
      )

    const events = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: EventsQuery) =>
      Effect.zipRight(readAgent(orgId, projectId, agentId), timeline.list(agentId, query))

    /**
     * The timeline after `afterSequence` as Server-Sent Events, then live, until the client
     * leaves: a comment opens the stream (so the response starts at once), one comment more
     * after each SSE_HEARTBEAT_INTERVAL without events.
     */
    const eventStream = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, afterSequence: number) =>
      Effect.as(
        readAgent(orgId, projectId, agentId),
        Stream.make(`: events of ${agentId} after sequence ${afterSequence}\n\n`).pipe(
          Stream.concat(Stream.unfoldChunkEffect(afterSequence, (after) =>
            Effect.map(timeline.waitForEvents(agentId, after, SSE_HEARTBEAT_INTERVAL), (events) =>
              Option.some(
                events.length === 0
                  ? [Chunk.of(": heartbeat\n\n"), after] as const
                  : [Chunk.fromIterable(events.map(toServerSentEvent)), events[events.length - 1].sequence] as const
              ))
          )),
          Stream.encodeText
        )
      )

    const turns = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* readAgent(orgId, projectId, agentId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<TurnRow>`
          SELECT * FROM turns
          WHERE agent_id = ${agentId} ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toTurn), limit, (turn) => turn.id)
      })

    const turn = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, turnId: TurnId) =>
      Effect.gen(function*() {
        yield* readAgent(orgId, projectId, agentId)
        const rows = yield* sql<TurnRow>`SELECT * FROM turns WHERE id = ${turnId} AND agent_id = ${agentId}`.pipe(
          Effect.orDie
        )
        return toTurn(yield* firstOr(() => new NotFound({ error: `Turn ${turnId} not found for agent ${agentId}` }))(rows))
      })

    const toolCalls = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* readAgent(orgId, projectId, agentId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<ToolCallRow>`
          SELECT * FROM tool_calls
          WHERE agent_id = ${agentId} ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toToolCall), limit, (call) => call.id)
      })

    /** A tool call of an agent (access already checked). */
    const toolCallOf = (agentId: AgentId, toolCallId: ToolCallId) =>
      sql<ToolCallRow>`SELECT * FROM tool_calls WHERE id = ${toolCallId} AND agent_id = ${agentId}`.pipe(
        Effect.orDie,
        Effect.flatMap(firstOr(() => new NotFound({ error: `Tool call ${toolCallId} not found for agent ${agentId}` }))),
        Effect.map(toToolCall)
      )

    const toolCall = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, toolCallId: ToolCallId) =>
      Effect.zipRight(readAgent(orgId, projectId, agentId), toolCallOf(agentId, toolCallId))

    const agentInteractions = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* readAgent(orgId, projectId, agentId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<InteractionRow>`
          SELECT * FROM interactions
          WHERE agent_id = ${agentId} ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toInteraction), limit, (interaction) => interaction.id)
      })

    /** The interactions of every agent of the project, oldest first, optionally of one status. */
    const projectInteractions = (
      orgId: OrgId,
      projectId: ProjectId,
      query: ListQuery & { readonly status?: Interaction["status"] | undefined }
    ) =>
      Effect.gen(function*() {
        yield* access.projectAccess(orgId, projectId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<InteractionRow>`
          SELECT * FROM interactions
          WHERE project_id = ${projectId}
            ${query.status === undefined ? sql`` : sql`AND status = ${query.status}`}
            ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toInteraction), limit, (interaction) => interaction.id)
      })

    /** An interaction of the project (access already checked). */
    const interactionOf = (projectId: ProjectId, interactionId: InteractionId) =>
      sql<InteractionRow>`SELECT * FROM interactions WHERE id = ${interactionId} AND project_id = ${projectId}`.pipe(
        Effect.orDie,
        Effect.flatMap(
          firstOr(() => new NotFound({ error: `Interaction ${interactionId} not found in project ${projectId}` }))
        ),
        Effect.map(toInteraction)
      )

    return {
      readAgent,
      writeAgent,
      create,
      current,
      list,
      backlog,
      inputByIdempotencyKey,
      events,
      eventStream,
      turns,
      turn,
      toolCalls,
      toolCall,
      toolCallOf,
      agentInteractions,
      projectInteractions,
      interactionOf
    } as const
  })
}) {}
