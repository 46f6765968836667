/**
 * The body of the turn workflow (docs/runtime.md, "Durability"): model step after model step,
 * waiting between them on the DurableDeferreds of the step's tool calls, until the model stops,
 * the provider fails for good, or the turn is cancelled. The step that ends the turn records the
 * end and starts the agent's next queued input (a cancel does both itself); an internal error
 * ends the turn through `finish`; so an agent never stays `running` after its turn is over.
 *
 * The steps are not Activities: a step's journal is its `turn_steps` row, written in the
 * transaction that records the model's answer, and a step run again (on every replay of the body,
 * after a crash, or on a second process) returns that recorded outcome instead of calling the
 * model again. An Activity would journal the same outcome a second time, in the cluster's tables,
 * for about a tenth of a turn's CPU (docs/performance-record.md).
 */
import { DurableDeferred, WorkflowEngine } from "effect/workflow"
import { Cause, Effect, Layer } from "effect"
import { TurnSteps } from "./TurnSteps.ts"
import { TurnWaits } from "./TurnWaits.ts"
import { turnSignal, TurnWorkflow, type TurnPayload } from "./TurnWorkflow.ts"

const runTurn = (payload: TurnPayload) =>
  Effect.gen(function*() {
    const steps = yield* TurnSteps
    const waits = yield* TurnWaits
    const executionId = yield* TurnWorkflow.executionId(payload)

    const loop = Effect.gen(function*() {
      for (let step = 1;; step++) {
        const outcome = yield* steps.modelStep(payload, step)
        switch (outcome._tag) {
          case "Stopped":
          case "Failed":
          case "Finished":
            return
          case "ToolCalls":
            for (const call of outcome.calls) {
              if (call.approval) {
                const decision = yield* DurableDeferred.await(turnSignal("approval", call.tool_call_id))
                if (decision !== "approve") continue
              }
              if (call.then !== "none") yield* waits.wait(payload, executionId, call.then, call.tool_call_id)
            }
        }
      }
    })

    yield* loop.pipe(
      Effect.catchDefect((defect) =>
        Effect.andThen(
          Effect.logError("A turn failed on an internal error", Cause.die(defect)),
          steps.finish(payload, "failed", "The turn stopped on an internal error of the platform; send the input again.")
        )
      ),
      // Finished, suspended to wait durably, or stopped here: the waits it kept are over (TurnWaits).
      Effect.ensuring(waits.forget(executionId))
    )
  })

/**
 * When the process stops, the waits in memory go durable before the engine stops the workflows
 * (which it gives `entityTerminationTimeout` to end): built after the engine, this is released
 * before it.
 */
const WaitsClosedAtStop = Layer.effectDiscard(Effect.gen(function*() {
  yield* WorkflowEngine.WorkflowEngine
  const waits = yield* TurnWaits
  yield* Effect.addFinalizer(() => waits.close)
}))

export const TurnWorkflowLive = Layer.merge(TurnWorkflow.toLayer(runTurn), WaitsClosedAtStop)
