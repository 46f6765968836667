/**
 * The agent runtime (docs/runtime.md): every mutation of an agent's runtime state after it
 * exists. Inputs (idempotent, bounded backlog), starting turns, withdrawing queued inputs,
 * cancelling the current turn, custom tool results and interaction resolutions; on start, the
 * recovery of what a stopped process left unfinished.
 *
 * Each operation is one transaction that locks the agent row first and writes the timeline with
 * the state change; what a waiting turn needs to go on (a DurableDeferred resolved, a workflow
 * started, a model call aborted) happens after the commit, and `recover` redoes it after a crash.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import {
  AgentBacklogFull,
  IdempotencyKeyConflict,
  NotFound,
  StateTransitionConflict
} from "../../domain/shared/Errors.ts"
import type { ActorId, AgentId, InteractionId, ProjectId, ToolCallId, TurnId } from "../../domain/shared/Ids.ts"
import { InputId, TurnId as TurnIdSchema } from "../../domain/shared/Ids.ts"
import type { CompiledTool } from "../../domain/configuration/agent-config/Compiled.ts"
import type { ContentBlock } from "../../domain/runtime/ContentBlocks.ts"
import type { AgentEvent, ControlEvent } from "../../domain/runtime/Events.ts"
import {
  InputAccepted,
  Interaction,
  type ResolveInteraction,
  ToolResult,
  ToolResultAccepted
} from "../../domain/runtime/Resources.ts"
import { type InteractionRow, toInteraction, toToolCall, type ToolCallRow } from "./RuntimeRows.ts"
import { Timeline } from "./Timeline.ts"
import { ToolDispatch } from "./ToolDispatch.ts"
import { TurnCancellation } from "./TurnCancellation.ts"
import { TurnLauncher } from "./TurnLauncher.ts"
import { TurnLifecycle } from "./TurnLifecycle.ts"
import { resolveSignal, type SignalKind, signalSent, turnStarted, type TurnSignal } from "./TurnWorkflow.ts"

/** Queued inputs an agent holds at most (docs/runtime.md); past it, `agent_backlog_full`. */
export const MAX_BACKLOG = 100

export interface SubmittedInput {
  readonly content_blocks: ReadonlyArray<ContentBlock>
  readonly actor_id: ActorId | null
  readonly input_idempotency_key: string | null
  /** sha256 of the canonical JSON of the request as submitted. */
  readonly request_hash: string
}

export interface SubmittedToolResult {
  readonly outcome: "succeeded" | "failed"
  readonly content_blocks: ReadonlyArray<ContentBlock>
}

type InputEvent = Extract<AgentEvent, { event_kind: "agent_input" }>
type ControlEventType = typeof ControlEvent.Type

/** A wait of a turn to resolve once the transaction that decided it has committed. */
interface Signal {
  readonly kind: SignalKind
  readonly toolCallId: ToolCallId
  readonly token: string
  readonly value: TurnSignal
}

const agentNotFound = (agentId: AgentId) => new NotFound({ error: `Agent ${agentId} not found` })

const callStateConflict = (call: ToolCallRow) => {
  switch (call.state) {
    case "completed":
      return `Tool call ${call.id} already has a result; only the first result is accepted`
    case "awaiting_authorization":
      return `Tool call ${call.id} awaits approval; resolve its approval interaction before submitting a result`
    case "cancelled":
      return `Tool call ${call.id} was cancelled with its turn; it takes no result`
    default:
      return `Tool call ${call.id} is ${call.state} and takes no result`
  }
}

export class AgentRuntime extends Effect.Service<AgentRuntime>()("AgentRuntime", {
  effect: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const timeline = yield* Timeline
    const lifecycle = yield* TurnLifecycle
    const launcher = yield* TurnLauncher
    const cancellation = yield* TurnCancellation
    const dispatcher = yield* ToolDispatch
    const engine = yield* Effect.context<
      Effect.Effect.Context<ReturnType<typeof resolveSignal> | ReturnType<typeof turnStarted>>
    >()

    const lockExisting = (agentId: AgentId) =>
      Effect.flatMap(lifecycle.lockAgent(agentId), Option.match({
        onNone: () => Effect.die(agentNotFound(agentId)),
        onSome: Effect.succeed
      }))

    const sendSignals = (signals: ReadonlyArray<Signal>) =>
      Effect.forEach(signals, (signal) =>
        resolveSignal(signal.kind, signal.toolCallId, signal.token, signal.value), { discard: true }).pipe(
          Effect.provide(engine)
        )

    const launchNext = (agentId: AgentId, next: Option.Option<TurnId>) =>
      Option.match(next, { onNone: () => Effect.void, onSome: (turnId) => launcher.launch(agentId, turnId) })

    const eventAt = (agentId: AgentId, sequence: number) =>
      Effect.map(timeline.list(agentId, { after_sequence: sequence - 1, limit: 1 }), (page) => page.data[0])

    const submitInput = (
      agentId: AgentId,
      input: SubmittedInput
    ): Effect.Effect<InputAccepted, IdempotencyKeyConflict | AgentBacklogFull> =>
      Effect.gen(function*() {
        const outcome = yield* timeline.transaction(Effect.gen(function*() {
          const agent = yield* lockExisting(agentId)
          if (input.input_idempotency_key !== null) {
            const [first] = yield* sql<{ request_hash: string; event_sequence: string; disposition: "started" | "queued" }>`
              SELECT request_hash, event_sequence, disposition FROM agent_inputs
              WHERE agent_id = ${agentId} AND idempotency_key = ${input.input_idempotency_key}`
            if (first !== undefined) {
              if (first.request_hash !== input.request_hash) {
                return yield* Effect.fail(
                  new IdempotencyKeyConflict({
                    error: `The input_idempotency_key ${input.input_idempotency_key} was already used on this agent ` +
                      `for a different input; use a new key for a new input`
                  })
                )
              }
              const event = yield* eventAt(agentId, Number(first.event_sequence))
              return { event: event as InputEvent, disposition: first.disposition, started: Option.none<TurnId>() }
            }
          }
          const startsNow = agent.current_turn_id === null
          if (!startsNow) {
            const [{ queued }] = yield* sql<{ queued: string }>`
              SELECT count(*) AS queued FROM agent_inputs WHERE agent_id = ${agentId} AND status = 'queued'`
            if (Number(queued) >= MAX_BACKLOG) {
              return yield* Effect.fail(
                new AgentBacklogFull({
                  error: `Agent ${agentId} already has ${MAX_BACKLOG} queued inputs; wait for its turns to finish, ` +
                    `or withdraw queued inputs, before sending more`
                })
              )
            }
          }
          const inputId = InputId.make()
          const turnId = TurnIdSchema.make()
          const [event] = yield* timeline.append(agentId, [{
            event_kind: "agent_input",
            turn_id: turnId,
            is_opening_event: true,
            agent_input_id: inputId,
            input_kind: "content",
            content_blocks: input.content_blocks,
            actor_id: input.actor_id,
            input_idempotency_key: input.input_idempotency_key
          }])
          const disposition = startsNow ? "started" as const : "queued" as const
          yield* sql`INSERT INTO agent_inputs ${
            sql.insert({
              id: inputId,
              agent_id: agentId,
              turn_id: turnId,
              event_sequence: event.sequence,
              status: "queued",
              content_blocks: JSON.stringify(input.content_blocks),
              actor_id: input.actor_id,
              idempotency_key: input.input_idempotency_key,
              request_hash: input.request_hash,
              disposition
            })
          }`
          if (startsNow) yield* lifecycle.startTurn(agentId, { id: inputId, turn_id: turnId })
          return { event: event as InputEvent, disposition, started: startsNow ? Option.some(turnId) : Option.none() }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        yield* launchNext(agentId, outcome.started)
        return new InputAccepted({ event: outcome.event, disposition: outcome.disposition })
      })

    const withdrawInput = (agentId: AgentId, inputId: InputId): Effect.Effect<void, NotFound | StateTransitionConflict> =>
      timeline.transaction(Effect.gen(function*() {
        yield* lockExisting(agentId)
        const [input] = yield* sql<{ status: "queued" | "started" | "withdrawn"; turn_id: TurnId }>`
          SELECT status, turn_id FROM agent_inputs WHERE id = ${inputId} AND agent_id = ${agentId} FOR UPDATE`
        if (input === undefined) {
          return yield* Effect.fail(new NotFound({ error: `Input ${inputId} not found on agent ${agentId}` }))
        }
        if (input.status !== "queued") {
          return yield* Effect.fail(
            new StateTransitionConflict({
              error: input.status === "started"
                ? `Input ${inputId} has already started its turn; cancel the current turn instead`
                : `Input ${inputId} was already withdrawn`
            })
          )
        }
        yield* sql`UPDATE agent_inputs SET status = 'withdrawn' WHERE id = ${inputId}`
        yield* timeline.append(agentId, [{
          event_kind: "turn",
          turn_id: input.turn_id,
          is_opening_event: false,
          turn_status: "cancelled",
          error: "The input was withdrawn from the backlog before its turn started.",
          usage: null
        }])
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    const cancelCurrent = (agentId: AgentId, actorId: ActorId | null): Effect.Effect<ControlEventType, StateTransitionConflict> =>
      Effect.gen(function*() {
        const outcome = yield* timeline.transaction(Effect.gen(function*() {
          const agent = yield* lockExisting(agentId)
          const turnId = agent.current_turn_id
          if (turnId === null) {
            return yield* Effect.fail(
              new StateTransitionConflict({ error: `Agent ${agentId} has no running turn to cancel` })
            )
          }
          const [control] = yield* timeline.append(agentId, [{
            event_kind: "control",
            turn_id: turnId,
            is_opening_event: false,
            control_type: "cancel_current",
            actor_id: actorId
          }])
          const readyCalls = yield* sql<{ id: ToolCallId; deferred_token: string }>`
            UPDATE tool_calls SET state = 'cancelled', completed_at = now()
            WHERE turn_id = ${turnId} AND state IN ('awaiting_authorization', 'ready', 'running')
            RETURNING id, deferred_token`
          const closed = yield* sql<InteractionRow>`
            UPDATE interactions SET status = 'closed', resolved_at = now()
            WHERE turn_id = ${turnId} AND status = 'pending'
            RETURNING *`
          if (closed.length > 0) {
            yield* timeline.append(agentId, closed.map((interaction) => ({
              event_kind: "interaction" as const,
              turn_id: turnId,
              is_opening_event: false,
              interaction_id: interaction.id,
              interaction_kind: interaction.kind,
              interaction_status: "closed" as const,
              tool_call_id: interaction.tool_call_id,
              content_blocks: [{ type: "text" as const, text: "Closed: the turn was cancelled." }]
            })))
          }
          const next = yield* lifecycle.finishTurn(agentId, turnId, "cancelled", "The turn was cancelled by a cancel_current control.")
          const signals: Array<Signal> = [
            ...readyCalls.flatMap((call) =>
              call.deferred_token === null
                ? []
                : [{ kind: "result" as const, toolCallId: call.id, token: call.deferred_token, value: "cancelled" as const }]
            ),
            ...closed.flatMap((interaction) =>
              interaction.tool_call_id === null ? [] : [{
                kind: interaction.kind,
                toolCallId: interaction.tool_call_id,
                token: interaction.deferred_token,
                value: "cancelled" as const
              }]
            )
          ]
          return { control: control as ControlEventType, turnId, next, signals }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        yield* cancellation.cancel(outcome.turnId)
        yield* sendSignals(outcome.signals)
        yield* launchNext(agentId, outcome.next)
        return outcome.control
      })

    const submitToolResult = (
      agentId: AgentId,
      toolCallId: ToolCallId,
      result: SubmittedToolResult
    ): Effect.Effect<ToolResultAccepted, NotFound | StateTransitionConflict> =>
      Effect.gen(function*() {
        const outcome = yield* timeline.transaction(Effect.gen(function*() {
          yield* lifecycle.lockAgent(agentId)
          const [call] = yield* sql<ToolCallRow>`
            SELECT * FROM tool_calls WHERE id = ${toolCallId} AND agent_id = ${agentId} FOR UPDATE`
          if (call === undefined) {
            return yield* Effect.fail(new NotFound({ error: `Tool call ${toolCallId} not found on agent ${agentId}` }))
          }
          if (call.type === "built_in") {
            return yield* Effect.fail(
              new StateTransitionConflict({
                error: `Tool call ${toolCallId} is a built-in tool (${call.name}); only custom tool calls accept results`
              })
            )
          }
          if (call.state !== "ready") return yield* Effect.fail(new StateTransitionConflict({ error: callStateConflict(call) }))
          const event = yield* dispatcher.completeCall(agentId, call.turn_id, call.id, result.outcome, result.content_blocks)
          yield* lifecycle.refreshStatus(agentId, call.turn_id)
          const [completed] = yield* sql<ToolCallRow>`SELECT * FROM tool_calls WHERE id = ${toolCallId}`
          return { call: completed, event }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        if (outcome.call.deferred_token !== null) {
          yield* sendSignals([{ kind: "result", toolCallId, token: outcome.call.deferred_token, value: "completed" }])
        }
        return new ToolResultAccepted({
          tool_call: toToolCall(outcome.call),
          tool_result: new ToolResult({
            event_id: outcome.event.id,
            agent_id: agentId,
            tool_call_id: toolCallId,
            outcome: outcome.event.outcome,
            content_blocks: outcome.event.content_blocks,
            created_at: outcome.event.created_at
          })
        })
      })

    const toolOf = (agentId: AgentId, name: string) =>
      sql<{ tool: CompiledTool | null }>`
        SELECT c.compiled_definition->'tools'->${name} AS tool
        FROM agents a JOIN agent_configs c ON c.id = a.agent_config_id WHERE a.id = ${agentId}`.pipe(
        Effect.map((rows) => rows[0]?.tool ?? undefined)
      )

    const resolveInteraction = (
      projectId: ProjectId,
      interactionId: InteractionId,
      resolution: ResolveInteraction
    ): Effect.Effect<Interaction, NotFound | StateTransitionConflict> =>
      Effect.gen(function*() {
        const notFound = new NotFound({ error: `Interaction ${interactionId} not found` })
        const [owner] = yield* sql<{ agent_id: AgentId }>`
          SELECT agent_id FROM interactions WHERE id = ${interactionId} AND project_id = ${projectId}`
        if (owner === undefined) return yield* Effect.fail(notFound)
        const agentId = owner.agent_id
        const outcome = yield* timeline.transaction(Effect.gen(function*() {
          yield* lifecycle.lockAgent(agentId)
          const [pending] = yield* sql<InteractionRow>`SELECT * FROM interactions WHERE id = ${interactionId} FOR UPDATE`
          if (pending === undefined) return yield* Effect.fail(notFound)
          if (pending.status !== "pending") {
            return yield* Effect.fail(
              new StateTransitionConflict({ error: `Interaction ${interactionId} is already ${pending.status}` })
            )
          }
          const answer = pending.kind === "question" && resolution.decision === "approve" ? resolution.answer ?? "" : null
          const message = resolution.message ?? null
          const [resolved] = yield* sql<InteractionRow>`
            UPDATE interactions SET status = 'resolved', decision = ${resolution.decision}, answer = ${answer},
              message = ${message}, resolved_at = now()
            WHERE id = ${interactionId} RETURNING *`
          const summary = answer ?? (resolution.decision === "approve" ? "Approved" : "Denied") +
              (message === null ? "." : `: ${message}`)
          yield* timeline.append(agentId, [{
            event_kind: "interaction",
            turn_id: pending.turn_id,
            is_opening_event: false,
            interaction_id: interactionId,
            interaction_kind: pending.kind,
            interaction_status: "resolved",
            tool_call_id: pending.tool_call_id,
            content_blocks: [{ type: "text", text: summary }]
          }])
          const signals: Array<Signal> = []
          if (pending.tool_call_id !== null) {
            const [call] = yield* sql<ToolCallRow>`SELECT * FROM tool_calls WHERE id = ${pending.tool_call_id} FOR UPDATE`
            const payload = { turn_id: pending.turn_id, agent_id: agentId }
            if (pending.kind === "approval") {
              if (resolution.decision === "approve") {
                const tool = yield* toolOf(agentId, call.name)
                yield* dispatcher.dispatch(payload, projectId, call, tool, true)
              } else {
                yield* dispatcher.failCall(
                  agentId,
                  pending.turn_id,
                  call.id,
                  `The tool call was denied${message === null ? "." : `: ${message}`}`
                )
              }
              signals.push({ kind: "approval", toolCallId: call.id, token: pending.deferred_token, value: resolution.decision })
            } else {
              if (answer !== null) {
                yield* dispatcher.completeCall(agentId, pending.turn_id, call.id, "succeeded", [{ type: "text", text: answer }])
              } else {
                yield* dispatcher.failCall(
                  agentId,
                  pending.turn_id,
                  call.id,
                  `The question was declined${message === null ? "." : `: ${message}`}`
                )
              }
              signals.push({ kind: "question", toolCallId: call.id, token: pending.deferred_token, value: "completed" })
            }
            yield* lifecycle.refreshStatus(agentId, pending.turn_id)
          }
          return { interaction: resolved, signals }
        }))
        yield* sendSignals(outcome.signals)
        return toInteraction(outcome.interaction)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * After a start, and every RECOVERY_SWEEP_INTERVAL on one process of the cluster
     * (src/layers/Runtime.ts): starts the workflow of every unfinished turn whose workflow was never
     * started, resolves again every wait whose resolution was committed but never sent (a process
     * that died between a commit and what follows it), and starts the turn of any idle agent's
     * oldest queued input. What was sent is left to the cluster, which delivers it wherever the
     * workflow's shard is. Every step is idempotent, so processes may run it at the same time.
     */
    const recover = Effect.gen(function*() {
      const unfinished = yield* sql<{ id: TurnId; agent_id: AgentId }>`
        SELECT id, agent_id FROM turns WHERE status IN ('running', 'waiting') ORDER BY id`
      const unstarted = yield* Effect.filter(unfinished, (turn) =>
        Effect.map(turnStarted({ turn_id: turn.id, agent_id: turn.agent_id }), (started) => !started)).pipe(
          Effect.provide(engine)
        )
      yield* Effect.forEach(unstarted, (turn) => launcher.launch(turn.agent_id, turn.id), { discard: true })
      const results = yield* sql<{ id: ToolCallId; deferred_token: string }>`
        SELECT c.id, c.deferred_token FROM tool_calls c JOIN turns t ON t.id = c.turn_id
        WHERE t.status IN ('running', 'waiting') AND c.state = 'completed' AND c.type = 'custom'
          AND c.deferred_token IS NOT NULL`
      const resolutions = yield* sql<InteractionRow>`
        SELECT i.* FROM interactions i JOIN turns t ON t.id = i.turn_id
        WHERE t.status IN ('running', 'waiting') AND i.status = 'resolved' AND i.tool_call_id IS NOT NULL`
      const committed: ReadonlyArray<Signal> = [
        ...results.map((call) => ({ kind: "result" as const, toolCallId: call.id, token: call.deferred_token, value: "completed" as const })),
        ...resolutions.map((interaction) => ({
          kind: interaction.kind,
          toolCallId: interaction.tool_call_id as ToolCallId,
          token: interaction.deferred_token,
          value: interaction.kind === "approval" ? interaction.decision ?? "deny" : "completed" as TurnSignal
        }))
      ]
      const unsent = yield* Effect.filter(committed, (signal) => Effect.map(signalSent(signal.token), (sent) => !sent)).pipe(
        Effect.provide(engine)
      )
      yield* sendSignals(unsent)
      const idle = yield* sql<{ id: AgentId }>`
        SELECT a.id FROM agents a
        WHERE a.current_turn_id IS NULL
          AND EXISTS (SELECT 1 FROM agent_inputs i WHERE i.agent_id = a.id AND i.status = 'queued')`
      yield* Effect.forEach(idle, (agent) =>
        Effect.flatMap(
          timeline.transaction(Effect.gen(function*() {
            const locked = yield* lockExisting(agent.id)
            return locked.current_turn_id === null ? yield* lifecycle.startNext(agent.id) : Option.none<TurnId>()
          })),
          (next) => launchNext(agent.id, next)
        ), { discard: true })
      if (unstarted.length + unsent.length + idle.length > 0) {
        yield* Effect.logInfo(
          `Recovery: started the workflows of ${unstarted.length} turns, sent ${unsent.length} committed ` +
            `resolutions, started the queued input of ${idle.length} idle agents`
        )
      }
    }).pipe(Effect.orDie)

    yield* recover

    return { submitInput, withdrawInput, cancelCurrent, submitToolResult, resolveInteraction, recover } as const
  })
}) {}
