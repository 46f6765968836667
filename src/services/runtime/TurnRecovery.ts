/**
 * The start-up step of the runtime (docs/runtime.md, "Durability"): what a stopped process left
 * unfinished is picked up again. It starts the workflow of every unfinished turn (a no-op for one
 * that exists), resolves again the waits whose resolution was committed but maybe not delivered,
 * and starts the turn of any idle agent's oldest queued input. It runs once the turn workflow is
 * registered, before the server listens.
 */
import { Effect, Layer, Option } from "effect"
import type { AgentId, TurnId } from "../../domain/shared/Ids.ts"
import { AgentInputsRepository } from "./AgentInputsRepository.ts"
import { InteractionsRepository } from "./InteractionsRepository.ts"
import { Timeline } from "./Timeline.ts"
import { ToolCallsRepository } from "./ToolCallsRepository.ts"
import { TurnLauncher } from "./TurnLauncher.ts"
import { TurnLifecycle } from "./TurnLifecycle.ts"
import { type Signal, TurnSignals } from "./TurnSignals.ts"
import { TurnsRepository } from "./TurnsRepository.ts"

export const recoverUnfinishedTurns = Effect.gen(function*() {
  const turns = yield* TurnsRepository
  const toolCalls = yield* ToolCallsRepository
  const interactions = yield* InteractionsRepository
  const inputs = yield* AgentInputsRepository
  const timeline = yield* Timeline
  const lifecycle = yield* TurnLifecycle
  const launcher = yield* TurnLauncher
  const signals = yield* TurnSignals

  const unfinished = yield* turns.unfinished
  yield* Effect.forEach(unfinished, (turn) => launcher.launch(turn.agent_id, turn.id), { discard: true })

  const turnIds = unfinished.map((turn) => turn.id)
  const results = yield* toolCalls.completedWaits(turnIds)
  const resolutions = yield* interactions.resolvedWaits(turnIds)
  yield* signals.send([
    ...results.flatMap((call): ReadonlyArray<Signal> =>
      call.deferred_token === null
        ? []
        : [{ kind: "result", toolCallId: call.id, token: call.deferred_token, value: "completed" }]
    ),
    ...resolutions.flatMap((interaction): ReadonlyArray<Signal> =>
      interaction.tool_call_id === null ? [] : [{
        kind: interaction.kind,
        toolCallId: interaction.tool_call_id,
        token: interaction.deferred_token,
        value: interaction.kind === "approval" ? interaction.decision ?? "deny" : "completed"
      }]
    )
  ])

  /** Starts the oldest queued input of an agent left idle; whether the agent was idle. */
  const startBacklog = (agentId: AgentId) =>
    Effect.gen(function*() {
      const { idle, next } = yield* timeline.transaction(Effect.gen(function*() {
        const agent = yield* lifecycle.lockExisting(agentId)
        return agent.current_turn_id === null
          ? { idle: true, next: yield* lifecycle.startNext(agentId) }
          : { idle: false, next: Option.none<TurnId>() }
      }))
      yield* launcher.launchNext(agentId, next)
      return idle
    })
  const idle = (yield* Effect.forEach(yield* inputs.agentsWithQueued, startBacklog)).filter(Boolean).length

  if (unfinished.length + idle > 0) {
    yield* Effect.logInfo(`Recovered ${unfinished.length} unfinished turns and ${idle} idle agents with queued inputs`)
  }
})

/** The recovery as a layer of the runtime's composition. */
export const TurnRecoveryLive = Layer.effectDiscard(recoverUnfinishedTurns).pipe(
  Layer.provide(Layer.mergeAll(
    TurnsRepository.Default,
    ToolCallsRepository.Default,
    InteractionsRepository.Default,
    AgentInputsRepository.Default,
    Timeline.Default,
    TurnLifecycle.Default,
    TurnLauncher.Default,
    TurnSignals.Default
  ))
)
