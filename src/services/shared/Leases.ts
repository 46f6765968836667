/**
 * A lease recorded on a row (a migration's hold on its worktree, a session start's hold on its
 * workspace's placements): taken for a while, renewed while the work it guards runs, released
 * when that work ends however it ends, and lapsing by itself when its server stops first. `held`
 * keeps a lease taken for the rest of the current scope; a failure to renew or release is logged
 * (the lease lapses by itself), never the work's failure.
 */
import { Effect, Option, Schedule, type Scope } from "effect"

/** A lease on a row, as its repository takes, renews and releases it. */
export interface Lease<A, E, R> {
  /** What the lease is, for the logs (`the migration hold on worktree …`). */
  readonly what: string
  /** Takes the lease; none when another holds it now. */
  readonly take: Effect.Effect<Option.Option<A>, E, R>
  readonly renew: Effect.Effect<unknown, unknown, R>
  readonly release: Effect.Effect<unknown, unknown, R>
  /** How often the lease is renewed while it is held (well within the time it lasts). */
  readonly renewEverySeconds: number
}

/** Releases the lease (`what`, for the logs) when the scope closes. */
const releasedAtEnd = <E, R>(what: string, release: Effect.Effect<unknown, E, R>): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.addFinalizer(() =>
    release.pipe(Effect.catchCause((cause) => Effect.logWarning(`releasing ${what} failed; it lapses by itself`, cause)))
  )

/** Renews the lease (`what`, for the logs) every `everySeconds` until the scope closes. */
const renewedWhileScoped = <E, R>(
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

/**
 * Takes the lease for the rest of the current scope: released when the scope closes, renewed
 * until then; none (nothing held) when another holds it now. Taking it and registering its
 * release are one uninterruptible step, so no interruption comes between them to leave the lease
 * held until it lapses.
 */
export const held = <A, E, R>(lease: Lease<A, E, R>): Effect.Effect<Option.Option<A>, E, R | Scope.Scope> =>
  Effect.gen(function*() {
    const taken = yield* Effect.uninterruptible(
      Effect.tap(lease.take, (taken) => Option.isSome(taken) ? releasedAtEnd(lease.what, lease.release) : Effect.void)
    )
    if (Option.isSome(taken)) yield* renewedWhileScoped(lease.what, lease.renew, lease.renewEverySeconds)
    return taken
  })
