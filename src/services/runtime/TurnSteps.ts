/**
 * The steps of a turn's workflow (docs/runtime.md, "The loop"):
 *
 * - `modelStep(turn, n)`: the n-th model call of a turn. It builds the request from the timeline
 *   (compacting earlier turns first when the input does not fit), calls the model through the
 *   adapter of the model's api format (its text and reasoning summary going out live as they
 *   come, LiveOutput), and records the response (StepRecorder). Run again after
 *   a crash, it returns the recorded step instead of calling the model again (without a read when
 *   this process remembers it); a call that never completed is made again.
 * - `finish(turn, status, error)`: ends the turn and starts the agent's next queued input.
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import { AppConfig } from "../../layers/AppConfig.ts"
import { Compaction } from "./Compaction.ts"
import { LiveOutput } from "./LiveOutput.ts"
import { describeOverflow, estimateInputTokens } from "./ContextBudget.ts"
import { ModelClient } from "./model/ModelClient.ts"
import type { OutputDeltaKind } from "../../domain/runtime/OutputDeltas.ts"
import type { AgentId, TurnId } from "../../domain/shared/Ids.ts"
import type { ModelEvent } from "./model/ModelMessages.ts"
import { StepRecorder } from "./StepRecorder.ts"
import { Timeline } from "./Timeline.ts"
import { TurnCancellation } from "./TurnCancellation.ts"
import { TurnHistory } from "./TurnHistory.ts"
import { TurnLauncher } from "./TurnLauncher.ts"
import { stepLimitError } from "./TurnLimits.ts"
import { type FinalTurnStatus, TurnLifecycle } from "./TurnLifecycle.ts"
import { type AgentIdentity, TurnSetups } from "./TurnSetups.ts"
import { TurnsRepository } from "./TurnsRepository.ts"
import { TurnWaits } from "./TurnWaits.ts"
import { failedStep, type StepOutcome, stoppedStep, type TurnPayload } from "./TurnWorkflow.ts"

/**
 * The live output of model events read together: their text and reasoning-summary deltas, those
 * of one kind that follow each other joined, so that what arrived in one read goes out as one delta.
 */
const liveDeltas = (events: ReadonlyArray<ModelEvent>) => {
  const deltas: Array<{ kind: OutputDeltaKind; text: string }> = []
  for (const event of events) {
    if (event.type !== "text_delta" && event.type !== "reasoning_delta") continue
    const kind = event.type === "text_delta" ? "text" : "reasoning_summary"
    const last = deltas[deltas.length - 1]
    if (last !== undefined && last.kind === kind) last.text += event.text
    else deltas.push({ kind, text: event.text })
  }
  return deltas
}

/** Agents whose identity (TurnSetups.AgentIdentity) a step remembers, at most; past it, the one kept longest is forgotten first. */
const KNOWN_AGENTS = 10_000

/** Turns whose recorded steps a step remembers, at most; past it, the one kept longest is forgotten first. */
const REMEMBERED_TURNS = 10_000


const make = Effect.gen(function*() {
  const turns = yield* TurnsRepository
  const timeline = yield* Timeline
  const lifecycle = yield* TurnLifecycle
  const launcher = yield* TurnLauncher
  const setups = yield* TurnSetups
  const histories = yield* TurnHistory
  const compaction = yield* Compaction
  const recorder = yield* StepRecorder
  const client = yield* ModelClient
  const cancellation = yield* TurnCancellation
  const live = yield* LiveOutput
  const waits = yield* TurnWaits
  const { maxTurnSteps } = yield* AppConfig

  /**
   * The recorded outcomes of the steps of recent turns that made tool calls, by turn, in step
   * order, from the turn's first: a turn resumed after its calls replays its steps, and each
   * returns its outcome from here without a read (a step's `turn_steps` row never changes once
   * written). A step that ends the turn forgets it.
   */
  const recordedSteps = new Map<TurnId, Array<StepOutcome>>()
  const rememberStep = (turnId: TurnId, step: number, outcome: StepOutcome) => {
    if (outcome._tag !== "ToolCalls") {
      recordedSteps.delete(turnId)
      return
    }
    const earlier = recordedSteps.get(turnId)
    if (earlier !== undefined) {
      if (earlier.length === step - 1) earlier.push(outcome)
    } else if (step === 1) {
      if (recordedSteps.size >= REMEMBERED_TURNS) recordedSteps.delete(recordedSteps.keys().next().value!)
      recordedSteps.set(turnId, [outcome])
    }
  }

  /** Ends the turn (when it still runs) and launches the agent's next queued input. */
  const finish = (payload: TurnPayload, status: FinalTurnStatus, error: string | null) =>
    Effect.gen(function*() {
      recordedSteps.delete(payload.turn_id)
      const next = yield* timeline.transaction(Effect.gen(function*() {
        // A deleted agent's turns are deleted with it: nothing to end.
        const agent = yield* lifecycle.lockAgent(payload.agent_id)
        if (Option.isNone(agent)) return Option.none()
        return yield* lifecycle.finishTurn(agent.value, payload.turn_id, status, error)
      }))
      yield* launcher.launchNext(payload.agent_id, next)
    })

  /** The agents of recent turns: an agent's config and project never change, so its setup can be read before its state. */
  const knownAgents = new Map<AgentId, AgentIdentity>()
  const remember = ({ agent_config_id, id, project_id }: AgentIdentity) => {
    if (knownAgents.has(id)) return
    if (knownAgents.size >= KNOWN_AGENTS) knownAgents.delete(knownAgents.keys().next().value!)
    knownAgents.set(id, { id, agent_config_id, project_id })
  }

  /**
   * The step's state and, when it is the step after those this process remembers recorded (a
   * turn's first, or the one after its tool calls) of an agent known here, its setup read at the
   * same time (on Postgres the two reads share a round trip: PipelinedStatements). Not any other step:
   * a turn resumed where its earlier steps are not remembered (another process recorded them)
   * replays them first, and each would read a setup it does not use.
   */
  const stateWithSetup = (payload: TurnPayload, step: number) => {
    const next = (recordedSteps.get(payload.turn_id)?.length ?? 0) + 1
    const known = step === next ? knownAgents.get(payload.agent_id) : undefined
    return known === undefined
      ? Effect.map(turns.stepState(payload.turn_id, step), (state) => ({ state, setup: Option.none() }))
      : Effect.map(
        Effect.all([turns.stepState(payload.turn_id, step), Effect.result(setups.of(known))], { concurrency: "unbounded" }),
        ([state, setup]) => ({ state, setup: Option.some(setup) })
      )
  }

  const attemptStep = (payload: TurnPayload, step: number): Effect.Effect<StepOutcome> =>
    Effect.gen(function*() {
      // The turn's state in one read: its status, the step's recorded outcome (a replayed step
      // returns it) and the agent with its timeline's last sequence (no turn: its agent was
      // deleted); with the agent's setup when it was read beside it.
      const { setup: early, state } = yield* stateWithSetup(payload, step)
      if (Option.isNone(state) || !state.value.active) return stoppedStep
      if (Option.isSome(state.value.recorded)) return state.value.recorded.value
      const { agent, lastSequence } = state.value
      remember(agent)

      const setup = Option.isSome(early) ? early.value : yield* Effect.result(setups.of(agent))
      if (Result.isFailure(setup)) return failedStep(setup.failure.message)
      let history = yield* histories.of(agent, lastSequence)
      let estimate = estimateInputTokens(setup.success.base, history.conversation.jsonLength)
      if (estimate > setup.success.budget.input) {
        const problem = yield* compaction.compact(agent, payload.turn_id, setup.success, history)
        if (Option.isSome(problem)) {
          switch (problem.value._tag) {
            case "Cancelled":
              return stoppedStep
            case "NothingToCompact":
              return failedStep(describeOverflow(estimate, setup.success.budget))
            case "ModelFailed":
              return failedStep(problem.value.message)
          }
        }
        history = yield* histories.of(agent)
        estimate = estimateInputTokens(setup.success.base, history.conversation.jsonLength)
        if (estimate > setup.success.budget.input) return failedStep(describeOverflow(estimate, setup.success.budget))
      }

      const request = { ...setup.success.base, conversation: history.conversation.items }
      const answer = yield* cancellation.unlessCancelled(
        payload.turn_id,
        Effect.scoped(Effect.flatMap(live.emitter(payload.agent_id, payload.turn_id, step), (emit) =>
          client.respond(request, (events) => {
            for (const delta of liveDeltas(events)) emit(delta.kind, delta.text)
          })))
      )
      if (Option.isNone(answer)) return stoppedStep
      if (Result.isFailure(answer.value)) {
        const error = answer.value.failure
        if (error.notCalled !== true) yield* turns.addFailedCall(payload.turn_id)
        return failedStep(
          `The model provider failed${error.status === null ? "" : ` with HTTP ${error.status}`}: ${error.message}`
        )
      }
      const outcome = yield* recorder.record(payload, agent, setup.success, step, answer.value.success)
      if (outcome._tag === "ToolCalls") yield* waits.expect(payload, outcome.calls)
      return outcome
    })

  /**
   * A step past the turn's model calls (docs/runtime.md, "Limits of a turn"): it fails the turn
   * without calling the model, unless the turn has ended, or the step was recorded (by a process
   * that allowed more steps); one read.
   */
  const pastTheLimit = (payload: TurnPayload, step: number): Effect.Effect<StepOutcome> =>
    Effect.map(turns.stepState(payload.turn_id, step), (state) =>
      Option.isNone(state) || !state.value.active
        ? stoppedStep
        : Option.isSome(state.value.recorded)
        ? state.value.recorded.value
        : failedStep(stepLimitError(maxTurnSteps)))

  /**
   * One model call of the turn. A step without tool calls ends the turn in the transaction that
   * records it; a step that fails ends it too; either way the next queued input is launched. The
   * step number is the workflow's count of its model calls: a replay runs the same steps again,
   * so a resumed turn counts the steps it had made.
   */
  const modelStep = (payload: TurnPayload, step: number): Effect.Effect<StepOutcome> => {
    const remembered = recordedSteps.get(payload.turn_id)?.[step - 1]
    if (remembered !== undefined) return Effect.succeed(remembered)
    const attempt = step > maxTurnSteps ? pastTheLimit(payload, step) : attemptStep(payload, step)
    return Effect.tap(attempt, (outcome) => {
      rememberStep(payload.turn_id, step, outcome)
      return outcome._tag === "Failed" ? finish(payload, "failed", outcome.error) : Effect.void
    })
  }

  return { modelStep, finish } as const
})

export class TurnSteps extends Context.Service<TurnSteps, Effect.Success<typeof make>>()("TurnSteps") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      TurnsRepository.layer,
      Timeline.layer,
      TurnLifecycle.layer,
      TurnLauncher.layer,
      TurnSetups.layer,
      TurnHistory.layer,
      Compaction.layer,
      StepRecorder.layer,
      ModelClient.layer,
      TurnCancellation.layer,
      LiveOutput.layer,
      TurnWaits.layer
    ])
  )
}
