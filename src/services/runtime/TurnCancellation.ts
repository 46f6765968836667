/**
 * Cancellation of a turn's model call in flight (docs/runtime.md, "Cancel"). The cancelled state
 * is in the database (the `turns` row); this service makes a call in this process stop at once:
 * `cancelled(turnId)` completes when `cancel(turnId)` is called here, or when the row shows the
 * turn finished (checked every POLL_INTERVAL, for a cancel made by another process).
 */
import { SqlClient } from "@effect/sql"
import { Deferred, Duration, Effect, FiberId, Schedule } from "effect"
import type { TurnId } from "../../domain/shared/Ids.ts"

export const CANCEL_POLL_INTERVAL = Duration.seconds(1)

export class TurnCancellation extends Effect.Service<TurnCancellation>()("TurnCancellation", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const waiting = new Map<TurnId, Deferred.Deferred<void>>()

    const signalOf = (turnId: TurnId) =>
      Effect.sync(() => {
        const existing = waiting.get(turnId)
        if (existing !== undefined) return existing
        const created = Deferred.unsafeMake<void>(FiberId.none)
        waiting.set(turnId, created)
        return created
      })

    const finishedInDatabase = (turnId: TurnId) =>
      sql<{ active: boolean }>`
        SELECT status IN ('running', 'waiting') AS active FROM turns WHERE id = ${turnId}`.pipe(
        Effect.map((rows) => rows[0]?.active !== true),
        Effect.orDie,
        Effect.repeat({ schedule: Schedule.spaced(CANCEL_POLL_INTERVAL), until: (finished) => finished }),
        Effect.asVoid
      )

    /** Completes once the turn is cancelled. */
    const cancelled = (turnId: TurnId) =>
      Effect.flatMap(signalOf(turnId), (signal) =>
        Effect.raceFirst(Deferred.await(signal), Effect.delay(finishedInDatabase(turnId), CANCEL_POLL_INTERVAL)).pipe(
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

    return { cancelled, cancel } as const
  })
}) {}
