/**
 * Resolving the waits of turns (TurnWorkflow.ts) from outside their workflows: once the
 * transaction that decided a wait's outcome has committed, it is handed to the workflow waiting
 * for it in this process (TurnWaits), else its signal is sent; recovery sends again the ones a
 * stopped process may not have delivered (a second resolution is ignored).
 */
import { WorkflowEngine } from "effect/workflow"
import { Context, Effect, Layer } from "effect"
import { type ResolvedWait, TurnWaits } from "./TurnWaits.ts"
import { resolveSignal, type TurnSignal } from "./TurnWorkflow.ts"

/** A wait of a turn and the value that resolves it. */
export interface Signal extends ResolvedWait {
  readonly value: TurnSignal
}

const make = Effect.gen(function*() {
  const engine = yield* WorkflowEngine.WorkflowEngine
  const waits = yield* TurnWaits
  return {
    send: (signals: ReadonlyArray<Signal>) =>
      Effect.forEach(
        signals,
        (signal) =>
          waits.handOver(signal) ? Effect.void : resolveSignal(signal.kind, signal.toolCallId, signal.token, signal.value),
        { discard: true }
      ).pipe(Effect.provideService(WorkflowEngine.WorkflowEngine, engine)),
    /** Whether this resolution was handed to its workflow here, so that it has no signal to send. */
    handedOver: waits.handedOver
  } as const
})

export class TurnSignals extends Context.Service<TurnSignals, Effect.Success<typeof make>>()("TurnSignals") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(TurnWaits.layer))
}
