/**
 * Cancellation of a turn's model call in flight (docs/runtime.md, "Cancel"). The cancelled state
 * is in the database (the `turns` row); this service makes a call in this process stop at once:
 * `cancelled(turnId)` completes when `cancel(turnId)` is called here, or when the row shows the
 * turn finished (a cancel made by another process). One read every CANCEL_POLL_INTERVAL checks
 * every turn with a call in flight in this process, however many there are.
 */
import { Context, Deferred, Duration, Effect, Exit, Layer, Option, type Result } from "effect"
import type { TurnId } from "../../domain/shared/Ids.ts"
import { TurnsRepository } from "./TurnsRepository.ts"

const CANCEL_POLL_INTERVAL = Duration.seconds(1)

const make = Effect.gen(function*() {
  const turns = yield* TurnsRepository
  const waiting = new Map<TurnId, Deferred.Deferred<void>>()

  const signalOf = (turnId: TurnId) =>
    Effect.sync(() => {
      const existing = waiting.get(turnId)
      if (existing !== undefined) return existing
      const created = Deferred.makeUnsafe<void>()
      waiting.set(turnId, created)
      return created
    })

  /** Signals the calls in flight whose turns have finished in the database. */
  const signalFinished = Effect.suspend(() => {
    const turnIds = [...waiting.keys()]
    if (turnIds.length === 0) return Effect.void
    return Effect.map(turns.activeAmong(turnIds), (active) => {
      for (const turnId of turnIds) {
        const signal = waiting.get(turnId)
        if (signal !== undefined && !active.has(turnId)) Deferred.doneUnsafe(signal, Exit.void)
      }
    })
  })
  yield* Effect.sleep(CANCEL_POLL_INTERVAL).pipe(
    Effect.andThen(signalFinished),
    Effect.catchCause((cause) =>
      Effect.logWarning("Checking the turns of model calls in flight for a cancel failed", cause)
    ),
    Effect.forever,
    Effect.forkScoped
  )

  /** Completes once the turn is cancelled. */
  const cancelled = (turnId: TurnId) =>
    Effect.flatMap(signalOf(turnId), (signal) =>
      Deferred.await(signal).pipe(
        Effect.ensuring(Effect.sync(() => {
          if (waiting.get(turnId) === signal) waiting.delete(turnId)
        }))
      ))

  /** Stops the turn's model call in flight in this process, if any. */
  const cancel = (turnId: TurnId) =>
    Effect.sync(() => {
      const signal = waiting.get(turnId)
      waiting.delete(turnId)
      return signal
    }).pipe(Effect.flatMap((signal) => signal === undefined ? Effect.void : Deferred.succeed(signal, undefined)))

  /** Runs `call` unless the turn is cancelled first: its outcome, or none when cancelled. */
  const unlessCancelled = <A, E, R>(turnId: TurnId, call: Effect.Effect<A, E, R>) =>
    Effect.raceFirst(
      Effect.map(Effect.result(call), Option.some),
      Effect.as(cancelled(turnId), Option.none<Result.Result<A, E>>())
    ).pipe(Effect.interruptible)

  return { cancel, unlessCancelled } as const
})

export class TurnCancellation extends Context.Service<TurnCancellation, Effect.Success<typeof make>>()("TurnCancellation") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(TurnsRepository.layer))
}
