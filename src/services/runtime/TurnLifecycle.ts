/**
 * The transitions of turns and agents, shared by the runtime's API side and its workflow. Each
 * runs inside its caller's transaction, which has locked the agent row first (`lockAgent`): every
 * runtime transaction takes that lock before any other, so they serialize per agent and never
 * deadlock.
 *
 * An agent is `running` while its current turn works, `waiting` while that turn waits for a tool
 * result, an approval or an answer, `idle` with no current turn; a turn ending starts the oldest
 * queued input's turn in the same transaction, so an agent with a backlog is never idle. The
 * transitions that may start a queued input take the agent as its lock read it: its count of
 * queued inputs says whether one waits, so none is looked for when none is queued.
 */
import { Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import type { Statement } from "effect/sql"
import type { AgentId, EventId, ProjectId, ToolCallId, TurnId } from "../../domain/shared/Ids.ts"
import type { Agent } from "../../domain/runtime/Agents.ts"
import type { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import type { EventOf, NewEvent, TokenUsage } from "../../domain/runtime/Events.ts"
import type { ToolOutcome } from "../../domain/runtime/ToolCalls.ts"
import { MachineRequestsRepository, type NewRequest } from "../machines/MachineRequestsRepository.ts"
import { someOrFail } from "../shared/Failures.ts"
import { agentNotFound } from "./AgentAccess.ts"
import { AgentsRepository, type LockedAgent } from "./AgentsRepository.ts"
import { AgentInputsRepository, type QueuedInput } from "./AgentInputsRepository.ts"
import { KnownAgentRows } from "./KnownAgentRows.ts"
import { InteractionsRepository } from "./InteractionsRepository.ts"
import type { AgentTurnState } from "./AgentEventsRepository.ts"
import { Timeline } from "./Timeline.ts"
import { type NewToolCall, ToolCallsRepository } from "./ToolCallsRepository.ts"
import { resultEvent } from "./ToolDispatch.ts"
import { TurnsRepository } from "./TurnsRepository.ts"
import type { StepOutcome } from "./TurnWorkflow.ts"

export type FinalTurnStatus = "completed" | "failed" | "cancelled"

/** The step being recorded was recorded by another run of it: its transaction rolls back. */
export class StepAlreadyRecorded extends Schema.TaggedError<StepAlreadyRecorded>()("StepAlreadyRecorded", {
  step: Schema.Int
}) {
  override get message() {
    return `Model call ${this.step} of the turn was recorded by another run of it`
  }
}

/** The `turn started` event of a turn. */
const startedEvent = (turnId: TurnId): NewEvent => ({
  event_kind: "turn",
  turn_id: turnId,
  is_opening_event: false,
  turn_status: "started",
  error: null,
  usage: null
})

/** The `turn` event that ends a turn with `status`. */
const endedEvent = (turnId: TurnId, status: FinalTurnStatus, error: string | null, usage: TokenUsage | null): NewEvent => ({
  event_kind: "turn",
  turn_id: turnId,
  is_opening_event: false,
  turn_status: status,
  error,
  usage
})

/** The agent running `turnId`, set by the append of the turn's `started` event. */
const running = (turnId: TurnId): AgentTurnState => ({ status: "running", current_turn_id: turnId })

/** The agent whose turn `turnId` waits for tool results, set by the append of the calls it waits for. */
const waiting = (turnId: TurnId): AgentTurnState => ({ status: "waiting", current_turn_id: turnId })

/** The agent without a turn, set by the append of the last turn's end. */
const idle: AgentTurnState = { status: "idle", current_turn_id: null }

const make = Effect.gen(function*() {
  const agents = yield* AgentsRepository
  const inputs = yield* AgentInputsRepository
  const turns = yield* TurnsRepository
  const toolCalls = yield* ToolCallsRepository
  const interactions = yield* InteractionsRepository
  const timeline = yield* Timeline
  const knownAgents = yield* KnownAgentRows
  const machineRequests = yield* MachineRequestsRepository

  /** Locks the agent row for the rest of the transaction; none when the agent does not exist. */
  const lockAgent = (agentId: AgentId): Effect.Effect<Option.Option<LockedAgent>> => agents.lock(agentId)

  /** Locks the agent row for the rest of the transaction; `not_found` when the agent is not in the project. */
  const lockInProject = (projectId: ProjectId, agentId: AgentId) =>
    agents.lockInProject(projectId, agentId).pipe(someOrFail(() => agentNotFound(projectId, agentId)))

  /** Starts a queued input's turn: its row, the input started, the turn's `started` event with the agent running it. */
  const startTurn = (agentId: AgentId, input: QueuedInput) =>
    Effect.gen(function*() {
      yield* turns.insert({ id: input.turn_id, agent_id: agentId, input_id: input.id })
      yield* inputs.setStatus(input.id, "started")
      yield* timeline.append(agentId, [startedEvent(input.turn_id)], running(input.turn_id))
    })

  /** The oldest queued input of the locked agent; not looked for when it has none queued. */
  const nextQueued = (agent: LockedAgent) =>
    agent.queued_inputs === 0 ? Effect.succeed(Option.none<QueuedInput>()) : inputs.oldestQueued(agent.id)

  /** Starts the oldest queued input's turn, or leaves the agent idle; the turn started, if any. */
  const startNext = (agent: LockedAgent) =>
    Effect.flatMap(nextQueued(agent), Option.match({
      onNone: () => Effect.as(agents.setCurrentTurn(agent.id, null, "idle"), Option.none<TurnId>()),
      onSome: (next) => Effect.as(startTurn(agent.id, next), Option.some(next.turn_id))
    }))

  /**
   * Ends the turn with `status` by `ended` (the update of its row: its token usage, none when
   * the turn had ended already), appending `lastEvents` before its end, then starts the oldest
   * queued input's turn; when none is queued, the append of the end leaves the agent idle. None
   * when the turn had ended; else the turn started, if any.
   */
  const endTurn = <E>(
    agent: LockedAgent,
    turnId: TurnId,
    status: FinalTurnStatus,
    error: string | null,
    ended: Effect.Effect<Option.Option<TokenUsage>, E>,
    lastEvents: ReadonlyArray<NewEvent> = []
  ) =>
    Effect.gen(function*() {
      const usage = yield* ended
      if (Option.isNone(usage)) return Option.none<Option.Option<TurnId>>()
      const next = yield* nextQueued(agent)
      yield* timeline.append(
        agent.id,
        [...lastEvents, endedEvent(turnId, status, error, usage.value)],
        Option.isNone(next) ? idle : undefined
      )
      if (Option.isNone(next)) return Option.some(Option.none<TurnId>())
      yield* startTurn(agent.id, next.value)
      return Option.some(Option.some(next.value.turn_id))
    })

  /**
   * Ends a running or waiting turn with its final status (and records it with the turn's token
   * usage), then starts the next queued input. Nothing when the turn had already ended.
   */
  const finishTurn = (agent: LockedAgent, turnId: TurnId, status: FinalTurnStatus, error: string | null) =>
    Effect.map(endTurn(agent, turnId, status, error, turns.finish(turnId, status, error)), Option.flatten)

  /**
   * Completes a running turn with its last model call, its `step`-th: the step's outcome
   * recorded and the call's usage counted by the update that ends the turn (one statement), its
   * output events appended with the turn's end (one append), then the next queued input started
   * (the turn started, if any). StepAlreadyRecorded when another run of the step recorded it
   * (nothing written); none when the turn had already ended, and the caller rolls back the
   * step's row.
   */
  const completeTurn = (
    agent: LockedAgent,
    turnId: TurnId,
    last: {
      readonly step: number
      readonly outcome: StepOutcome
      readonly usage: TokenUsage
      readonly events: ReadonlyArray<NewEvent>
    }
  ) =>
    endTurn(
      agent,
      turnId,
      "completed",
      null,
      Effect.flatMap(turns.complete(turnId, last.step, last.outcome, last.usage), ({ recorded, usage }) =>
        recorded ? Effect.succeed(usage) : Effect.fail(new StepAlreadyRecorded({ step: last.step }))),
      last.events
    )

  /**
   * Completes a running turn with its last model call, its `step`-th, in one statement without
   * a transaction, when nothing else is in the way: no transaction holds the agent, it has no
   * queued input, its timeline has not grown since the statement began, the turn still runs, and
   * the step was not recorded (AgentsRepository.lockTimelineUnchanged, TurnsRepository.lastStepGuard).
   * The step recorded, the turn completed with the call's usage, the call's output and the turn's
   * end appended, the agent left idle, all in that statement: true. Else nothing is written, false,
   * and the caller takes the transaction's way (`completeTurn`), which finds out what was in the
   * way. The agent (as the step read it) is remembered as the statement left it (KnownAgentRows),
   * for its next input.
   */
  const completeAlone = (
    agent: Agent,
    turnId: TurnId,
    last: { readonly step: number; readonly usage: TokenUsage; readonly events: ReadonlyArray<NewEvent> }
  ) =>
    Effect.flatMap(
      timeline.appendGuarded(
        agent.id,
        // The turn's usage is the one the guard's statement leaves, which the append writes in its end.
        [...last.events, endedEvent(turnId, "completed", null, null)],
        idle,
        turns.lastStepGuard(agents.lockTimelineUnchanged(agent.id, { idle: true }), turnId, last.step, last.usage)
      ),
      (appended) =>
        appended.length === 0 ? Effect.succeed(false) : Effect.as(
          knownAgents.remember({
            id: agent.id,
            project_id: agent.project_id,
            agent_config_id: agent.agent_config_id,
            metadata: agent.metadata,
            last_sequence: appended[appended.length - 1].sequence,
            current_turn_id: null,
            queued_inputs: 0
          }),
          true
        )
    )

  /** What a turn waits for: a call's approval or result (other than `except`: ToolCallsRepository.openCalls), an answer. */
  const waitsOf = (turnId: TurnId, except?: ToolCallId) => [
    toolCalls.openCalls(turnId, except),
    interactions.pendingInteractions(turnId)
  ]

  /**
   * Sets the turn (and its agent) to `waiting` while a call awaits approval, a result or an answer,
   * else `running`, in one statement.
   */
  const refreshStatus = (agentId: AgentId, turnId: TurnId) =>
    turns.refreshStatus(turnId, waitsOf(turnId), agents.statusFrom(agentId, turnId))

  /**
   * Records the turn's `step`-th model call, which made tool calls (dispatched already), with its
   * outcome and usage, and sets the turn's and the agent's status as `refreshStatus` does, in one
   * statement. `active` is false when the turn had ended, and `recorded` when another run of the
   * step recorded it: nothing is written then, and the caller rolls back.
   */
  const recordCallsStep = (
    agentId: AgentId,
    turnId: TurnId,
    step: { readonly step: number; readonly outcome: StepOutcome; readonly usage: TokenUsage }
  ) =>
    turns.recordCallsStep(turnId, step.step, step.outcome, step.usage, waitsOf(turnId), agents.statusFrom(agentId, turnId))

  /**
   * Records the turn's `step`-th model call, whose tool calls are each dispatched with their row
   * alone (custom tools that wait for a client's result, machine tools that wait for a daemon's,
   * neither needing approval: ToolDispatch.dispatchedWithItsRow), with the machine calls'
   * `requests`, in one statement without a transaction, when nothing is in the way: no
   * transaction holds the agent, its timeline has not grown since the statement began, the turn
   * still runs, and the step was not recorded (AgentsRepository.lockTimelineUnchanged,
   * TurnsRepository.callsStepGuard). The step recorded with its outcome, the call counted with its
   * usage, the calls' rows and requests, the call's output appended, and the turn and the agent
   * `waiting` (for a client) or `running` (machines run every call), all in that statement: true.
   * Else nothing is written, false, and the caller takes the transaction's way, which finds out
   * what was in the way.
   */
  const recordCallsAlone = (
    agentId: AgentId,
    turnId: TurnId,
    step: { readonly step: number; readonly outcome: StepOutcome; readonly usage: TokenUsage },
    events: ReadonlyArray<NewEvent>,
    calls: Arr.NonEmptyReadonlyArray<NewToolCall>,
    requests: ReadonlyArray<NewRequest>
  ) =>
    Effect.gen(function*() {
      const status = calls.some((call) => call.state === "ready") ? "waiting" : "running"
      const prelude = turns.callsStepGuard(
        agents.lockTimelineUnchanged(agentId, { idle: false }),
        turnId,
        step.step,
        step.outcome,
        step.usage,
        status
      )
      const newCalls = yield* toolCalls.insertBefore(calls, prelude.guard.name)
      const newRequests = yield* machineRequests.insertBefore(requests, prelude.guard.name)
      const appended = yield* timeline.appendGuarded(
        agentId,
        events,
        status === "waiting" ? waiting(turnId) : running(turnId),
        { ...prelude, with: [...prelude.with, newCalls, ...newRequests] }
      )
      return appended.length > 0
    })

  /**
   * Completes the open call `callId` of the turn with its result (its `tool_result` event,
   * ToolDispatch.resultEvent) and sets the turn's and the agent's status as `refreshStatus` does,
   * in one statement without a transaction, when nothing is in the way: the agent's timeline has
   * not grown since the statement began, the turn has not ended (TurnsRepository.lockActive), and
   * the call is still open. `completion` gives the common table expressions that lock the call
   * after the turn's (`turn`, the name of its expression) and complete it, the last of them its
   * `completed_call` (ToolCallsRepository.lockOpenBefore and completeAfter, with a machine call's
   * request between them). The result's event as appended; none when something was in the way:
   * nothing is written then, and the caller takes the transaction's way, which finds out what it
   * was.
   */
  const completeCallAlone = (
    agentId: AgentId,
    turnId: TurnId,
    callId: ToolCallId,
    outcome: typeof ToolOutcome.Type,
    contentBlocks: ReadonlyArray<ContentBlock>,
    completion: (turn: string, resultEventId: EventId) => ReadonlyArray<Statement.Fragment>
  ) => {
    const agent = agents.lockTimelineUnchanged(agentId, { idle: false })
    return Effect.map(
      timeline.appendGuarded(agentId, [resultEvent(turnId, callId, outcome, contentBlocks)], undefined, ([eventId]) => ({
        guard: { name: "refreshed", turnUsage: false, agentStatus: true },
        with: [
          ...agent.with,
          turns.lockActive(turnId, [agent.name]),
          ...completion("turn", eventId),
          ...turns.statusRefreshedAfter(turnId, waitsOf(turnId, callId), "completed_call")
        ]
      })),
      (appended) => Option.map(Arr.head(appended), (event) => event as EventOf<"tool_result">)
    )
  }

  return {
    lockAgent,
    lockInProject,
    startedEvent,
    running,
    startNext,
    finishTurn,
    completeTurn,
    completeAlone,
    refreshStatus,
    recordCallsStep,
    recordCallsAlone,
    completeCallAlone
  } as const
})

export class TurnLifecycle extends Context.Service<TurnLifecycle, Effect.Success<typeof make>>()("TurnLifecycle") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      AgentsRepository.layer,
      AgentInputsRepository.layer,
      TurnsRepository.layer,
      ToolCallsRepository.layer,
      InteractionsRepository.layer,
      Timeline.layer,
      KnownAgentRows.layer,
      MachineRequestsRepository.layer
    ])
  )
}
