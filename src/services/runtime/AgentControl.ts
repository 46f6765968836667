/**
 * Control of a running agent (docs/runtime.md, "Cancel"): `cancel_current` stops the current
 * turn. In one transaction, the control event is recorded, the turn's open tool calls are
 * cancelled and its pending interactions closed, and the turn ends (starting the next queued
 * input); after the commit the model call in flight stops, the turn's waits are resolved, and
 * the daemons running its machine tool calls are told to cancel them (a command is killed).
 */
import { Context, Effect, Layer } from "effect"
import { type NotFound, StateTransitionConflict } from "../../domain/shared/Errors.ts"
import type { ActorId, AgentId, OrgId, ProjectId, TurnId } from "../../domain/shared/Ids.ts"
import type { Control } from "../../domain/runtime/Agents.ts"
import type { ControlEvent } from "../../domain/runtime/Events.ts"
import { MachineHub } from "../machines/MachineHub.ts"
import { MachineRequestsRepository } from "../machines/MachineRequestsRepository.ts"
import { AgentAccess } from "./AgentAccess.ts"
import { InteractionsRepository } from "./InteractionsRepository.ts"
import { Timeline } from "./Timeline.ts"
import { ToolCallsRepository } from "./ToolCallsRepository.ts"
import { TurnCancellation } from "./TurnCancellation.ts"
import { TurnLauncher } from "./TurnLauncher.ts"
import { TurnLifecycle } from "./TurnLifecycle.ts"
import { type Signal, TurnSignals } from "./TurnSignals.ts"

type ControlEventType = typeof ControlEvent.Type

const make = Effect.gen(function*() {
  const agentAccess = yield* AgentAccess
  const toolCalls = yield* ToolCallsRepository
  const interactions = yield* InteractionsRepository
  const timeline = yield* Timeline
  const lifecycle = yield* TurnLifecycle
  const launcher = yield* TurnLauncher
  const cancellation = yield* TurnCancellation
  const signals = yield* TurnSignals
  const machineRequests = yield* MachineRequestsRepository
  const hub = yield* MachineHub

  /**
   * Cancels the agent's current turn (only if it is `expected`, when given); the control event.
   * `not_found` when the agent is not in the project, as when the project is deleted while the
   * cancel waits for the agent's lock.
   */
  const cancel = (
    projectId: ProjectId,
    agentId: AgentId,
    actorId: ActorId | null,
    expected: TurnId | undefined
  ): Effect.Effect<ControlEventType, NotFound | StateTransitionConflict> =>
    Effect.gen(function*() {
      const outcome = yield* timeline.transaction(Effect.gen(function*() {
        const agent = yield* lifecycle.lockInProject(projectId, agentId)
        const turnId = agent.current_turn_id
        if (expected !== undefined && turnId !== expected) {
          return yield* Effect.fail(
            new StateTransitionConflict({
              error: `Turn ${expected} is not the current turn of agent ${agentId} (it has ended, or is not this agent's); ` +
                `nothing was cancelled. ` +
                (turnId === null ? "No turn is running now" : `The current turn is ${turnId}: name it to cancel it`)
            })
          )
        }
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
        const cancelledCalls = yield* toolCalls.cancelOpen(turnId)
        const machinesToTell = yield* machineRequests.requestCancel(cancelledCalls.map((call) => call.id))
        const closed = yield* interactions.closePending(turnId)
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
        const next = yield* lifecycle.finishTurn(agent, turnId, "cancelled", "The turn was cancelled by a cancel_current control.")
        const waits: Array<Signal> = [
          ...cancelledCalls.flatMap((call) =>
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
        return { control: control as ControlEventType, turnId, next, waits, machinesToTell }
      }))
      yield* cancellation.cancel(outcome.turnId)
      yield* hub.wake(outcome.machinesToTell)
      yield* signals.send(outcome.waits)
      yield* launcher.launchNext(agentId, outcome.next)
      return outcome.control
    })

  /** `cancel_current`, for a caller who may act in the agent's project. */
  const cancelCurrent = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, control: Control) =>
    Effect.andThen(agentAccess.mayWrite(orgId, projectId), cancel(projectId, agentId, null, control.turn_id))

  return { cancelCurrent } as const
})

export class AgentControl extends Context.Service<AgentControl, Effect.Success<typeof make>>()("AgentControl") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      AgentAccess.layer,
      ToolCallsRepository.layer,
      InteractionsRepository.layer,
      Timeline.layer,
      TurnLifecycle.layer,
      TurnLauncher.layer,
      TurnCancellation.layer,
      TurnSignals.layer,
      MachineRequestsRepository.layer,
      MachineHub.layer
    ])
  )
}
