/** Temporary, until the runtime reads through repositories: rows read without a schema. */
import { Effect } from "effect"

/** Timestamps (the columns ending in `_at`) as Dates. */
export const withDates = <R extends object>(row: R): R =>
  Object.fromEntries(
    Object.entries(row).map(([key, value]) => [key, key.endsWith("_at") && typeof value === "string" ? new Date(value) : value])
  ) as R

/** The first row, or `onEmpty()` when the query returned none. */
export const firstOr = <E>(onEmpty: () => E) => <A>(rows: ReadonlyArray<A>): Effect.Effect<A, E> =>
  rows.length === 0 ? Effect.fail(onEmpty()) : Effect.succeed(rows[0])
