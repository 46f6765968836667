/**
 * A lease recorded on a row (a migration's hold on its worktree, a session start's hold on its
 * workspace's placements): taken for a while, renewed while the work it guards runs, released
 * when that work ends however it ends, and lapsing by itself when its server stops first. These
 * keep a lease taken for the rest of the current scope; a failure to renew or release is logged
 * (the lease lapses by itself), never the work's failure.
 */
import { Effect, Schedule, type Scope } from "effect"

/** Releases the lease (`what`, for the logs) when the scope closes. */
export const releasedAtEnd = <E, R>(what: string, release: Effect.Effect<unknown, E, R>): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.addFinalizer(() =>
    release.pipe(Effect.catchCause((cause) => Effect.logWarning(`releasing ${what} failed; it lapses by itself`, cause)))
  )

/** Renews the lease (`what`, for the logs) every `everySeconds` until the scope closes. */
export const renewedWhileScoped = <E, R>(
  what: string,
  renew: Effect.Effect<unknown, E, R>,
  everySeconds: number
): Effect.Effect<void, never, R | Scope.Scope> =>
  renew.pipe(
    Effect.catchCause((cause) => Effect.logWarning(`renewing ${what} failed`, cause)),
    Effect.repeat(Schedule.spaced(`${everySeconds} seconds`)),
    Effect.delay(`${everySeconds} seconds`),
    Effect.forkScoped,
    Effect.asVoid
  )
