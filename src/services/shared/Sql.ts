import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

const UNIQUE_VIOLATION = "23505"

const isUniqueViolation = (error: SqlError): boolean =>
  typeof error.cause === "object" && error.cause !== null && (error.cause as { code?: unknown }).code === UNIQUE_VIOLATION

/** Turns a unique-key violation into `onDuplicate()`; any other database failure is a defect. */
export const onDuplicate = <E2>(onDuplicate: () => E2) =>
<A, E, R>(self: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, Exclude<E, SqlError> | E2, R> =>
  Effect.catchIf(
    self,
    (error): error is SqlError => typeof error === "object" && error !== null && (error as any)._tag === "SqlError",
    (error) => isUniqueViolation(error) ? Effect.fail(onDuplicate()) : Effect.die(error)
  ) as any

/** The first row, or `onEmpty()` when the query returned none. */
export const firstOr = <E>(onEmpty: () => E) => <A>(rows: ReadonlyArray<A>): Effect.Effect<A, E> =>
  rows.length === 0 ? Effect.fail(onEmpty()) : Effect.succeed(rows[0])

const FOREIGN_KEY_VIOLATION = "23503"

/**
 * Turns a foreign-key violation (a row still referenced, or a reference to a row just deleted)
 * into `onViolation()`; any other database failure is a defect.
 */
export const onForeignKeyViolation = <E2>(onViolation: () => E2) =>
<A, E, R>(self: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, Exclude<E, SqlError> | E2, R> =>
  Effect.catchIf(
    self,
    (error): error is SqlError => typeof error === "object" && error !== null && (error as any)._tag === "SqlError",
    (error) =>
      typeof error.cause === "object" && error.cause !== null &&
        (error.cause as { code?: unknown }).code === FOREIGN_KEY_VIOLATION
        ? Effect.fail(onViolation())
        : Effect.die(error)
  ) as any
