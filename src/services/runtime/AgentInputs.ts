/**
 * Agent inputs (docs/agents-api.md, docs/runtime.md): sending one (idempotent under a key,
 * bounded backlog), withdrawing a queued one, and reading the backlog. An input starts its turn
 * at once when the agent is idle, else it waits in the backlog. Each change locks the agent row
 * first and writes the timeline with it: in one statement guarded on a read of the agent, for
 * most inputs (`recordAlone`), else in a transaction.
 */
import { Context, Effect, Layer, Option } from "effect"
import { AgentBacklogFull, IdempotencyKeyConflict, NotFound, StateTransitionConflict } from "../../domain/shared/Errors.ts"
import { type ActorId, type AgentId, InputId, type OrgId, type ProjectId, TurnId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import type { Agent } from "../../domain/runtime/Agents.ts"
import type { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import type { EventOf, NewEvent } from "../../domain/runtime/Events.ts"
import { InputAccepted, type SendInput } from "../../domain/runtime/Inputs.ts"
import { canonicalJson } from "../../domain/configuration/agent-config/Canonical.ts"
import type { JsonValue } from "../../domain/configuration/agent-config/Definition.ts"
import { someOrFail } from "../shared/Failures.ts"
import { sha256 } from "../shared/Hash.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Actors } from "./Actors.ts"
import { AgentAccess, agentNotFound } from "./AgentAccess.ts"
import { Artifacts, type PreparedBlock, prepareBlocks } from "./Artifacts.ts"
import { type Disposition, AgentInputsRepository } from "./AgentInputsRepository.ts"
import { type AgentRuntimeState, AgentsRepository } from "./AgentsRepository.ts"
import { type InputDecisionRow, KnownAgentRows } from "./KnownAgentRows.ts"
import { PersonalResourceUse } from "./PersonalResourceUse.ts"
import { Timeline } from "./Timeline.ts"
import { TurnLauncher } from "./TurnLauncher.ts"
import { TurnLifecycle } from "./TurnLifecycle.ts"
import { TurnsRepository } from "./TurnsRepository.ts"
import { WorkspaceSessionsRepository } from "../workspaces/WorkspaceSessionsRepository.ts"

/** Queued inputs an agent holds at most (docs/runtime.md); past it, `agent_backlog_full`. */
export const MAX_BACKLOG = 100

/** The answer to an input, and whether it replays the first answer under its idempotency key (200) or is new (201). */
export interface SentInput {
  readonly accepted: InputAccepted
  readonly replayed: boolean
}

/**
 * An input recorded: its event, the answer it got, and the turn it started, if any; or, replayed,
 * the first input under its idempotency key (nothing recorded, nothing started).
 */
interface RecordedInput {
  readonly event: EventOf<"agent_input">
  readonly disposition: Disposition
  readonly started: Option.Option<TurnId>
  readonly replayed: boolean
}

/** A workspace session's agent: launched with the workspace in its metadata, which never changes. */
const inWorkspace = (agent: Pick<Agent, "metadata">) => typeof agent.metadata.workspace_id === "string"

/** An input to record, its media already stored. */
interface NewInput {
  readonly content_blocks: ReadonlyArray<ContentBlock>
  readonly actor_id: ActorId | null
  readonly input_idempotency_key: string | null
  /** sha256 of the canonical JSON of the request as submitted. */
  readonly request_hash: string
}

/** sha256 of the canonical JSON of an input as submitted: what idempotent replays must match. */
const requestHash = (input: SendInput) =>
  sha256(canonicalJson({ content_blocks: input.content_blocks, actor_id: input.actor_id ?? null } as unknown as JsonValue))

/** An input as submitted, without its content (stored with its media). */
const inputRequest = (input: SendInput): Omit<NewInput, "content_blocks"> => ({
  actor_id: input.actor_id ?? null,
  input_idempotency_key: input.input_idempotency_key ?? null,
  request_hash: requestHash(input)
})

const make = Effect.gen(function*() {
  const inputs = yield* AgentInputsRepository
  const agents = yield* AgentsRepository
  const turns = yield* TurnsRepository
  const agentAccess = yield* AgentAccess
  const actors = yield* Actors
  const artifacts = yield* Artifacts
  const timeline = yield* Timeline
  const lifecycle = yield* TurnLifecycle
  const launcher = yield* TurnLauncher
  const personalResources = yield* PersonalResourceUse
  const workspaceSessions = yield* WorkspaceSessionsRepository
  const ids = yield* IdGenerator
  const knownAgents = yield* KnownAgentRows

  const eventAt = (agent: Agent, sequence: number) =>
    Effect.map(timeline.list(agent, { after_sequence: sequence - 1, limit: 1 }), (page) => page.data[0] as EventOf<"agent_input">)

  /**
   * The input's event, with its turn's `started` event when the agent is idle (the input starts
   * the turn then, else it joins the backlog), and what the statement appending them writes with
   * them: the input's row, and the turn's when it starts. `agent` is as its lock read it, or as a
   * read the statement guards on: `guard`, the name of the agent's lock in that statement.
   * `agent_backlog_full` when the backlog is full.
   */
  const newInput = (agent: AgentRuntimeState, input: NewInput, guard?: string) =>
    Effect.gen(function*() {
      const startsNow = agent.current_turn_id === null
      if (!startsNow && agent.queued_inputs >= MAX_BACKLOG) {
        return yield* Effect.fail(
          new AgentBacklogFull({
            error: `Agent ${agent.id} already has ${MAX_BACKLOG} queued inputs; wait for its turns to finish, ` +
              `or withdraw queued inputs, before sending more`
          })
        )
      }
      const inputId = yield* ids.make(InputId)
      const turnId = yield* ids.make(TurnId)
      const disposition: Disposition = startsNow ? "started" : "queued"
      const inputRow = yield* inputs.insertBefore({
        id: inputId,
        agent_id: agent.id,
        turn_id: turnId,
        status: disposition,
        // Its event is the agent's next.
        event_sequence: agent.last_sequence + 1,
        content_blocks: input.content_blocks,
        actor_id: input.actor_id,
        input_idempotency_key: input.input_idempotency_key,
        request_hash: input.request_hash,
        disposition
      }, guard)
      const event: NewEvent = {
        event_kind: "agent_input",
        turn_id: turnId,
        is_opening_event: true,
        agent_input_id: inputId,
        input_kind: "content",
        content_blocks: input.content_blocks,
        actor_id: input.actor_id,
        input_idempotency_key: input.input_idempotency_key
      }
      return {
        disposition,
        started: startsNow ? Option.some(turnId) : Option.none<TurnId>(),
        events: startsNow ? [event, lifecycle.startedEvent(turnId)] : [event],
        state: startsNow ? lifecycle.running(turnId) : undefined,
        writes: startsNow
          ? [inputRow, turns.insertBefore({ id: turnId, agent_id: agent.id, input_id: inputId }, guard)]
          : [inputRow]
      }
    })

  /**
   * Records the input in a transaction that locks the agent first, in one statement after the
   * lock (the input's row, the turn's when it starts, and their events); the first answer again
   * for a repeated key, found under the lock, so that of inputs sent at once under one key only
   * one is recorded; `not_found` when the agent is not in the project. `blocks` gives the input's
   * blocks once the input is known to be new: stored already, or stored by it in this transaction,
   * so that a replay or a refused input stores no media.
   */
  const recordLocked = (
    projectId: ProjectId,
    agentId: AgentId,
    input: Omit<NewInput, "content_blocks">,
    blocks: Effect.Effect<ReadonlyArray<ContentBlock>>
  ) =>
    timeline.transaction(Effect.gen(function*() {
      const agent = yield* lifecycle.lockInProject(projectId, agentId)
      yield* personalResources.requireForAgentOf(agent.agent_config_id)
      // The worktree of a workspace session's agent (launched with the workspace in its metadata,
      // which never changes) is not worked on while it is being migrated (docs/workspaces.md,
      // "Migration"); read under the agent's lock, which the migration waits for.
      const migrating = inWorkspace(agent) ? yield* workspaceSessions.migratingOfAgent(agentId) : Option.none()
      if (Option.isSome(migrating)) {
        return yield* Effect.fail(
          new StateTransitionConflict({
            error: `Worktree ${migrating.value} of agent ${agentId} is being migrated; send the input once the ` +
              "migration has finished (then, to work where the worktree went, start a session there)"
          })
        )
      }
      const key = input.input_idempotency_key
      const first = key === null ? Option.none() : yield* inputs.byIdempotencyKey(agentId, key)
      if (Option.isSome(first)) {
        if (first.value.request_hash !== input.request_hash) {
          return yield* Effect.fail(
            new IdempotencyKeyConflict({
              error: `The input_idempotency_key ${key} was already used on this agent ` +
                `for a different input; use a new key for a new input`
            })
          )
        }
        const event = yield* eventAt(agent, first.value.event_sequence)
        const replayed: RecordedInput = { event, disposition: first.value.disposition, started: Option.none(), replayed: true }
        return replayed
      }
      const written = yield* newInput(agent, { ...input, content_blocks: yield* blocks })
      const [event] = yield* timeline.append(agentId, written.events, written.state, written.writes)
      const recorded: RecordedInput = {
        event: event as EventOf<"agent_input">,
        disposition: written.disposition,
        started: written.started,
        replayed: false
      }
      return recorded
    }))

  /**
   * Records the input in one statement that writes only while the agent is as `agent` says
   * (AgentsRepository.lockUnchanged), so what was decided on it holds under the agent's lock, and
   * remembers the agent's row as the statement left it (KnownAgentRows), for its next input.
   * None when the agent is not as it says (nothing was written), or is a workspace session's
   * (its input waits for a worktree migration, in the transaction).
   */
  const recordGuarded = (agent: InputDecisionRow, input: NewInput) =>
    Effect.gen(function*() {
      if (inWorkspace(agent)) return Option.none<RecordedInput>()
      yield* personalResources.requireForAgentOf(agent.agent_config_id)
      const lock = agents.lockUnchanged(agent)
      const written = yield* newInput(agent, input, lock.name)
      const appended = yield* timeline.appendGuarded(agent.id, written.events, written.state, {
        with: [...lock.with, ...written.writes],
        guard: { name: lock.name, turnUsage: false }
      })
      if (appended.length === 0) return Option.none<RecordedInput>()
      yield* knownAgents.remember({
        id: agent.id,
        project_id: agent.project_id,
        agent_config_id: agent.agent_config_id,
        metadata: agent.metadata,
        last_sequence: appended[appended.length - 1].sequence,
        current_turn_id: Option.getOrElse(written.started, () => agent.current_turn_id),
        queued_inputs: Option.isSome(written.started) ? agent.queued_inputs : agent.queued_inputs + 1
      })
      return Option.some<RecordedInput>({
        event: appended[0] as EventOf<"agent_input">,
        disposition: written.disposition,
        started: written.started,
        replayed: false
      })
    })

  /**
   * Records an input without an idempotency key in one statement (docs/runtime.md, "Inputs and
   * the backlog"), guarded on the agent's row as this process's last write to it left it (its
   * last turn's end, or its last input: KnownAgentRows), else as read. None when the agent
   * changed meanwhile (nothing was written), or when the input needs the transaction: a key to
   * look up first, a worktree migration to wait for.
   */
  const recordAlone = (projectId: ProjectId, agentId: AgentId, input: NewInput) =>
    Effect.gen(function*() {
      if (input.input_idempotency_key !== null) return Option.none<RecordedInput>()
      const left = yield* knownAgents.take(agentId)
      if (Option.isSome(left) && left.value.project_id === projectId) {
        // A backlog full by the remembered row may have room by now: the row as read decides that.
        const recorded = yield* recordGuarded(left.value, input).pipe(
          Effect.catchTag("AgentBacklogFull", () => Effect.succeed(Option.none<RecordedInput>()))
        )
        if (Option.isSome(recorded) || inWorkspace(left.value)) return recorded
      }
      const agent = yield* agents.rowInProject(projectId, agentId).pipe(someOrFail(() => agentNotFound(projectId, agentId)))
      return yield* recordGuarded(agent, input)
    })

  /**
   * Records an input without an idempotency key, its media stored: in one statement when nothing
   * is in the way, else in a transaction; `not_found` when the agent is not in the project.
   */
  const record = (projectId: ProjectId, agentId: AgentId, input: NewInput) =>
    Effect.flatMap(
      recordAlone(projectId, agentId, input),
      Option.match({
        onSome: Effect.succeed,
        onNone: () => recordLocked(projectId, agentId, input, Effect.succeed(input.content_blocks))
      })
    )

  /**
   * Runs `recording` (an input's) and launches the turn it started, if any: the answer, and
   * whether it replays the first answer under the input's idempotency key. Not interrupted once
   * begun (a request cut off meanwhile): the one statement, pipelined, cannot be cancelled
   * (PipelinedStatements), and the turn an input recorded starts at once rather than at the next
   * recovery sweep.
   */
  const answer = <E, R>(agentId: AgentId, recording: Effect.Effect<RecordedInput, E, R>) =>
    Effect.uninterruptible(Effect.flatMap(recording, (recorded) => startRecorded(agentId, recorded)))

  /** Launches the turn a recorded input started, if any: the input's answer. */
  const startRecorded = (agentId: AgentId, recorded: RecordedInput) =>
    Effect.as(launcher.launchNext(agentId, recorded.started), {
      accepted: new InputAccepted({ event: recorded.event, disposition: recorded.disposition }),
      replayed: recorded.replayed
    } satisfies SentInput)

  /**
   * A new agent (`insert`, which makes agent `agentId`) and its first input, in one transaction:
   * a launch with an input makes both or neither (docs/agents-api.md). The turn the input
   * starts is the caller's to launch (`startRecorded`) once the transaction has committed.
   */
  const recordWithNewAgent = <A, E, R>(
    projectId: ProjectId,
    agentId: AgentId,
    insert: Effect.Effect<A, E, R>,
    input: SendInput,
    prepared: ReadonlyArray<PreparedBlock>
  ) =>
    timeline.transaction(Effect.gen(function*() {
      const made = yield* insert
      const recorded = yield* recordLocked(projectId, agentId, inputRequest(input), artifacts.storeInTransaction(agentId, prepared))
      return [made, recorded] as const
    }))

  /** Checks an input's actor and size limits; nothing is stored. */
  const check = (projectId: ProjectId, input: SendInput, field: string) =>
    Effect.andThen(
      input.actor_id === undefined ? Effect.void : actors.requireInProject(projectId, input.actor_id, `${field}/actor_id`),
      prepareBlocks(input.content_blocks, `${field}/content_blocks`)
    )

  /**
   * Records an input of a checked request to an agent of the project and starts its turn when
   * the agent is idle; its media, if any, are stored, so the caller must have found the agent in
   * the project first. Without an idempotency key, the media are stored before the input is
   * recorded. With one, the input is recorded in a transaction that looks the key up under the
   * agent's lock and stores the media only when the key is new: a key already used on this agent
   * answers the first answer again when the request is the same (a replay: nothing recorded, no
   * media stored), `idempotency_key_conflict` when not, however many requests send it at once.
   */
  const submit = (projectId: ProjectId, agentId: AgentId, input: SendInput, prepared: ReadonlyArray<PreparedBlock>) =>
    Effect.gen(function*() {
      const request = inputRequest(input)
      if (request.input_idempotency_key !== null) {
        return yield* answer(agentId, recordLocked(projectId, agentId, request, artifacts.storeInTransaction(agentId, prepared)))
      }
      const content_blocks = yield* artifacts.store(agentId, prepared)
      return yield* answer(agentId, record(projectId, agentId, { ...request, content_blocks }))
    })

  /**
   * Sends an input. The agent is found in the project before media of the input are stored;
   * an input without media finds it with the read (or the lock) that records it (one read fewer).
   */
  const send = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, input: SendInput) =>
    Effect.gen(function*() {
      yield* agentAccess.mayWrite(orgId, projectId)
      const prepared = yield* check(projectId, input, "")
      if (prepared.some((block) => block.type === "media")) yield* agentAccess.write(orgId, projectId, agentId)
      return yield* submit(projectId, agentId, input, prepared)
    })

  /** Withdraws a queued input; `not_found` when the agent is not in the project, found under its lock. */
  const withdraw = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, inputId: InputId) =>
    Effect.andThen(
      agentAccess.mayWrite(orgId, projectId),
      timeline.transaction(Effect.gen(function*() {
        yield* lifecycle.lockInProject(projectId, agentId)
        const input = yield* inputs.lock(agentId, inputId)
        if (Option.isNone(input)) {
          return yield* Effect.fail(new NotFound({ error: `Input ${inputId} not found on agent ${agentId}` }))
        }
        if (input.value.status !== "queued") {
          return yield* Effect.fail(
            new StateTransitionConflict({
              error: input.value.status === "started"
                ? `Input ${inputId} has already started its turn; cancel the current turn instead`
                : `Input ${inputId} was already withdrawn`
            })
          )
        }
        yield* inputs.setStatus(inputId, "withdrawn")
        yield* timeline.append(agentId, [{
          event_kind: "turn",
          turn_id: input.value.turn_id,
          is_opening_event: false,
          turn_status: "cancelled",
          error: "The input was withdrawn from the backlog before its turn started.",
          usage: null
        }])
      }))
    )

  /** The queued inputs of an agent, oldest (next to run) first. */
  const backlog = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: ListQuery) =>
    Effect.andThen(
      agentAccess.read(orgId, projectId, agentId),
      paged(listOf("input backlog", agentId), query, (keyset) => inputs.backlog(agentId, keyset), (input) => input.id)
    )

  return { check, recordWithNewAgent, startRecorded, send, withdraw, backlog } as const
})

export class AgentInputs extends Context.Service<AgentInputs, Effect.Success<typeof make>>()("AgentInputs") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      AgentInputsRepository.layer,
      AgentsRepository.layer,
      TurnsRepository.layer,
      AgentAccess.layer,
      Actors.layer,
      Artifacts.layer,
      Timeline.layer,
      TurnLifecycle.layer,
      TurnLauncher.layer,
      PersonalResourceUse.layer,
      WorkspaceSessionsRepository.layer,
      IdGenerator.layer,
      KnownAgentRows.layer
    ])
  )
}
