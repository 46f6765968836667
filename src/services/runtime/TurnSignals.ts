/**
 * Resolving the waits of turns (TurnWorkflow.ts) from outside their workflows: once the
 * transaction that decided a wait's outcome has committed, its signal is sent; recovery sends
 * again the ones a stopped process may not have delivered (a second resolution is ignored).
 */
import { WorkflowEngine } from "@effect/workflow"
import { Effect } from "effect"
import type { ToolCallId } from "../../domain/shared/Ids.ts"
import { resolveSignal, type SignalKind, type TurnSignal } from "./TurnWorkflow.ts"

/** A wait of a turn and the value that resolves it. */
export interface Signal {
  readonly kind: SignalKind
  readonly toolCallId: ToolCallId
  readonly token: string
  readonly value: TurnSignal
}

export class TurnSignals extends Effect.Service<TurnSignals>()("TurnSignals", {
  effect: Effect.map(WorkflowEngine.WorkflowEngine, (engine) => ({
    send: (signals: ReadonlyArray<Signal>) =>
      Effect.forEach(
        signals,
        (signal) => resolveSignal(signal.kind, signal.toolCallId, signal.token, signal.value),
        { discard: true }
      ).pipe(Effect.provideService(WorkflowEngine.WorkflowEngine, engine))
  }))
}) {}
