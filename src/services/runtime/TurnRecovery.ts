/**
 * The recovery of the runtime (docs/runtime.md, "Durability"): what a stopped process left
 * unfinished is picked up again. It starts the workflow of every unfinished turn whose workflow
 * was never started, sends every wait resolution that was committed but never sent (a process that
 * died between a commit and what follows it), and starts the turn of any idle agent's oldest
 * queued input. What was sent is left to the cluster, which delivers it wherever the workflow's
 * shard is. It runs once the turn workflow is registered, before the server listens, and again
 * every RECOVERY_SWEEP_INTERVAL on one process of the cluster (a cluster singleton): on a shared
 * database the other processes go on without restarting. Every step is idempotent, so processes
 * may run it at the same time.
 */
import { type MessageStorage, Sharding, Singleton } from "effect/cluster"
import { Context, Duration, Effect, Layer, Option } from "effect"
import type { AgentId, TurnId } from "../../domain/shared/Ids.ts"
import { AgentInputsRepository } from "./AgentInputsRepository.ts"
import { InteractionsRepository } from "./InteractionsRepository.ts"
import { Timeline } from "./Timeline.ts"
import { ToolCallsRepository } from "./ToolCallsRepository.ts"
import { TurnLauncher } from "./TurnLauncher.ts"
import { TurnLifecycle } from "./TurnLifecycle.ts"
import { type Signal, TurnSignals } from "./TurnSignals.ts"
import { TurnsRepository } from "./TurnsRepository.ts"
import { markTurnMessagesUnread, signalSent, type TurnPayload, turnStarted } from "./TurnWorkflow.ts"

const RECOVERY_SWEEP_INTERVAL = Duration.seconds(30)

const makeRecovery = Effect.gen(function*() {
  const turns = yield* TurnsRepository
  const toolCalls = yield* ToolCallsRepository
  const interactions = yield* InteractionsRepository
  const inputs = yield* AgentInputsRepository
  const timeline = yield* Timeline
  const lifecycle = yield* TurnLifecycle
  const launcher = yield* TurnLauncher
  const signals = yield* TurnSignals
  /** The cluster's message storage, asked what was sent already. */
  const cluster = yield* Effect.context<Sharding.Sharding | MessageStorage.MessageStorage>()

  const recover = Effect.gen(function*() {
    const unfinished = yield* turns.unfinished
    const payloads = unfinished.map((turn): TurnPayload => ({ turn_id: turn.id, agent_id: turn.agent_id }))
    const startedFlags = yield* Effect.forEach(payloads, turnStarted)
    const unstarted = payloads.filter((_, index) => !startedFlags[index])
    yield* Effect.forEach(unstarted, (turn) => launcher.launch(turn.agent_id, turn.turn_id), { discard: true })
    // What a started turn's workflow still has to process is read again (TurnWorkflow.markTurnMessagesUnread).
    yield* Effect.forEach(payloads.filter((_, index) => startedFlags[index]), markTurnMessagesUnread, { discard: true })
    yield* Effect.flatMap(Sharding.Sharding, (sharding) => sharding.pollStorage)

    const turnIds = unfinished.map((turn) => turn.id)
    const results = yield* toolCalls.completedWaits(turnIds)
    const resolutions = yield* interactions.resolvedWaits(turnIds)
    const committed: ReadonlyArray<Signal> = [
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
    ]
    // A resolution handed to its workflow in this process has no signal (TurnWaits).
    const unsent = yield* Effect.filter(
      committed.filter((signal) => !signals.handedOver(signal)),
      (signal) => Effect.map(signalSent(signal.token), (sent) => !sent)
    )
    yield* signals.send(unsent)

    /**
     * Starts the oldest queued input of an agent left idle; whether the agent was idle. An agent
     * deleted since it was listed (its project deleted) has nothing to start.
     */
    const startBacklog = (agentId: AgentId) =>
      Effect.gen(function*() {
        const { idle, next } = yield* timeline.transaction(Effect.gen(function*() {
          const agent = yield* lifecycle.lockAgent(agentId)
          return Option.isSome(agent) && agent.value.current_turn_id === null
            ? { idle: true, next: yield* lifecycle.startNext(agent.value) }
            : { idle: false, next: Option.none<TurnId>() }
        }))
        yield* launcher.launchNext(agentId, next)
        return idle
      })
    const idle = (yield* Effect.forEach(yield* inputs.agentsWithQueued, startBacklog)).filter(Boolean).length

    if (unstarted.length + unsent.length + idle > 0) {
      yield* Effect.logInfo(
        `Recovery: started the workflows of ${unstarted.length} turns, sent ${unsent.length} committed ` +
          `resolutions, started the queued input of ${idle} idle agents`
      )
    }
  }).pipe(Effect.provide(cluster))

  return { recover } as const
})

const make = makeRecovery

export class TurnRecovery extends Context.Service<TurnRecovery, Effect.Success<typeof make>>()("TurnRecovery") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      TurnsRepository.layer,
      ToolCallsRepository.layer,
      InteractionsRepository.layer,
      AgentInputsRepository.layer,
      Timeline.layer,
      TurnLifecycle.layer,
      TurnLauncher.layer,
      TurnSignals.layer
    ])
  )
}

/** The recovery again every RECOVERY_SWEEP_INTERVAL, on the one process of the cluster that holds the singleton. */
const RecoverySweepLive = Singleton.make(
  "AgentRuntime/RecoverySweep",
  Effect.flatMap(TurnRecovery, (recovery) => recovery.recover).pipe(
    Effect.catchCause((cause) => Effect.logError("The recovery sweep failed", cause)),
    Effect.delay(RECOVERY_SWEEP_INTERVAL),
    Effect.forever
  )
)

/** The recovery as a start-up step of the runtime's composition, then as a sweep. */
export const TurnRecoveryLive = Layer.merge(
  Layer.effectDiscard(Effect.flatMap(TurnRecovery, (recovery) => recovery.recover)),
  RecoverySweepLive
).pipe(Layer.provideMerge(TurnRecovery.layer))
