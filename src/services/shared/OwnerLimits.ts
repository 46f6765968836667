/**
 * A cap on how many rows one owner (a user, an organization) may have, which creates at once
 * cannot pass: the create's transaction locks the owner's row, counts the owner's rows, and
 * creates only below the cap. Creates for one owner then wait for each other at the lock, and
 * each counts what the ones before it committed.
 *
 * The lock and the count are two statements. Under READ COMMITTED a statement reads the
 * snapshot taken when it began; one that locked and counted (`WITH owner AS (SELECT ... FOR
 * UPDATE) SELECT count(*) ...`) took it before waiting for the lock, and missed the rows the
 * lock's holder committed meanwhile (50 key creates at once, from 990 keys, made 1,007). A count
 * begun once the lock is held sees them.
 */
import { Effect } from "effect"
import type { Conflict } from "../../domain/shared/Errors.ts"

export const withinOwnerLimit = <A, E, R>(
  limit: {
    /**
     * Locks the owner's row until the transaction ends (against the other creates' locks). An
     * owner deleted meanwhile is left to the create, whose insert's foreign key refuses it.
     */
    readonly lockOwner: Effect.Effect<unknown>
    /** How many rows the owner has. */
    readonly count: Effect.Effect<number>
    readonly max: number
    /** Why the owner, at `max` rows already (`count`), may not have another. */
    readonly refusal: (count: number) => Conflict
  },
  create: Effect.Effect<A, E, R>
): Effect.Effect<A, E | Conflict, R> =>
  Effect.gen(function*() {
    yield* limit.lockOwner
    const count = yield* limit.count
    return count >= limit.max ? yield* limit.refusal(count) : yield* create
  })
