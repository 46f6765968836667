/**
 * Resolving the waits of turns (TurnWorkflow.ts) from outside their workflows: once the
 * transaction that decided a wait's outcome has committed, its signal is sent; recovery sends
 * again the ones a stopped process may not have delivered (a second resolution is ignored).
 */
import { WorkflowEngine } from "effect/workflow"
import { Context, Effect, Layer } from "effect"
import type { ToolCallId } from "../../domain/shared/Ids.ts"
import { resolveSignal, type SignalKind, type TurnSignal } from "./TurnWorkflow.ts"

/** A wait of a turn and the value that resolves it. */
export interface Signal {
  readonly kind: SignalKind
  readonly toolCallId: ToolCallId
  readonly token: string
  readonly value: TurnSignal
}

const make = Effect.map(WorkflowEngine.WorkflowEngine, (engine) => ({
  send: (signals: ReadonlyArray<Signal>) =>
    Effect.forEach(
      signals,
      (signal) => resolveSignal(signal.kind, signal.toolCallId, signal.token, signal.value),
      { discard: true }
    ).pipe(Effect.provideService(WorkflowEngine.WorkflowEngine, engine))
}))

export class TurnSignals extends Context.Service<TurnSignals, Effect.Success<typeof make>>()("TurnSignals") {
  static readonly layer = Layer.effect(this, make)
}
