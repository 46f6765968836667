/**
 * Starts turn workflows. Launches go through a queue served by a fiber of this service, which
 * starts each in a fiber of its own (starts of different agents' turns do not wait for each
 * other), so a workflow started from inside another (the next queued input, when a turn finishes)
 * is a separate execution, not a child of the turn that finished. Starting is idempotent: a
 * turn's execution id is derived from its id, and starting an existing execution changes nothing.
 */
import { WorkflowEngine } from "effect/workflow"
import { Context, Effect, Layer, Option, Queue } from "effect"
import type { AgentId, TurnId } from "../../domain/shared/Ids.ts"
import { TurnWorkflow } from "./TurnWorkflow.ts"

const make = Effect.gen(function*() {
  const pending = yield* Queue.unbounded<{ readonly turn_id: TurnId; readonly agent_id: AgentId }>()
  const engine = yield* WorkflowEngine.WorkflowEngine
  const scope = yield* Effect.scope
  yield* Queue.take(pending).pipe(
    Effect.flatMap((payload) =>
      TurnWorkflow.execute(payload, { discard: true }).pipe(
        Effect.catchCause((cause) => Effect.logError("Could not start the turn workflow", cause)),
        Effect.forkIn(scope)
      )
    ),
    Effect.forever,
    Effect.provideService(WorkflowEngine.WorkflowEngine, engine),
    Effect.forkScoped
  )

  const launch = (agentId: AgentId, turnId: TurnId) => Effect.asVoid(Queue.offer(pending, { turn_id: turnId, agent_id: agentId }))

  /** Launches the turn a transaction started, if it started one (after it committed). */
  const launchNext = (agentId: AgentId, next: Option.Option<TurnId>) =>
    Option.match(next, { onNone: () => Effect.void, onSome: (turnId) => launch(agentId, turnId) })

  return { launch, launchNext } as const
})

export class TurnLauncher extends Context.Service<TurnLauncher, Effect.Success<typeof make>>()("TurnLauncher") {
  static readonly layer = Layer.effect(this, make)
}
