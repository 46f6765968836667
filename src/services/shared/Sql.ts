/**
 * What repositories do with database failures. A failed query or a row that does not decode is
 * a defect: the cause is kept, and the request that met it is logged and answered with 500. The
 * violations of a constraint that guards a rule (a unique name, a row still referenced) become
 * these typed failures, which the service turns into the error its caller sees.
 */
import type { SqlClient } from "effect/sql"
import { SqlError, Statement } from "effect/sql"
import { Effect, Schema } from "effect"

export class UniqueViolation extends Schema.TaggedError<UniqueViolation>()("UniqueViolation", {
  constraint: Schema.String
}) {
  override get message() {
    return `The unique constraint ${this.constraint} refused the row`
  }
}

export class ForeignKeyViolation extends Schema.TaggedError<ForeignKeyViolation>()("ForeignKeyViolation", {
  constraint: Schema.String
}) {
  override get message() {
    return `The foreign key ${this.constraint} refused the change`
  }
}

const UNIQUE_VIOLATION = "23505"
const FOREIGN_KEY_VIOLATION = "23503"
const LOCK_NOT_AVAILABLE = "55P03"

export const isSqlError = (error: unknown): error is SqlError.SqlError => SqlError.isSqlError(error)

/**
 * The server's error fields of a failed statement, when its SQLSTATE is `code`. The driver keeps
 * them (`code`, `constraint`) on the reason's cause.
 */
const serverError = (error: unknown, code: string): object | undefined => {
  if (!isSqlError(error)) return undefined
  const fields = error.reason.cause
  return typeof fields === "object" && fields !== null && "code" in fields && fields.code === code ? fields : undefined
}

/** The constraint a failed statement violated, when it failed with that kind of violation. */
const violated = (error: unknown, code: string): string | undefined => {
  const fields = serverError(error, code)
  if (fields === undefined) return undefined
  return "constraint" in fields && typeof fields.constraint === "string" ? fields.constraint : "unknown"
}

/**
 * A statement that found a row it locks `NOWAIT` locked by another transaction (it failed with
 * lock_not_available, having changed nothing) succeeds with `locked()`; any other failure stays.
 */
export const orWhenLocked = <A, B, E, R>(self: Effect.Effect<A, E, R>, locked: () => B): Effect.Effect<A | B, E, R> =>
  Effect.catchIf(self, (error) => serverError(error, LOCK_NOT_AVAILABLE) !== undefined, () => Effect.succeed(locked()))

/** A unique-key violation is `UniqueViolation`; any other failure is a defect. */
export const uniqueOrDie = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, UniqueViolation, R> =>
  Effect.catch(self, (error) => {
    const constraint = violated(error, UNIQUE_VIOLATION)
    return constraint === undefined ? Effect.die(error) : Effect.fail(new UniqueViolation({ constraint }))
  })

/** A foreign-key violation is `ForeignKeyViolation`; any other failure is a defect. */
export const foreignKeyOrDie = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, ForeignKeyViolation, R> =>
  Effect.catch(self, (error) => {
    const constraint = violated(error, FOREIGN_KEY_VIOLATION)
    return constraint === undefined ? Effect.die(error) : Effect.fail(new ForeignKeyViolation({ constraint }))
  })

/** A fragment of a statement, taken by a repository's statement that other repositories' fragments complete. */
export const SqlFragment = Schema.declare(Statement.isFragment)

/** A lock a read takes on the rows it finds, held until the transaction ends. */
export type RowLock = "none" | "share" | "update"

export const lockClause = (sql: SqlClient.SqlClient, lock: RowLock): Statement.Fragment =>
  lock === "share" ? sql`FOR SHARE` : lock === "update" ? sql`FOR UPDATE` : sql``

/**
 * `INSERT INTO table (the row's columns) SELECT its values FROM guard`: the row, inserted only
 * when `guard`, a common table expression of the same statement, holds a row (the guarded
 * prelude of an append: AgentEventsRepository.AppendPrelude).
 */
export const insertGuarded = (
  sql: SqlClient.SqlClient,
  table: string,
  row: Readonly<Record<string, unknown>>,
  guard: string
): Statement.Fragment => {
  const columns = Object.keys(row)
  return sql`INSERT INTO ${sql(table)} (${sql.csv(columns.map((column) => sql`${sql(column)}`))})
    SELECT ${sql.csv(columns.map((column) => sql`${row[column]}`))} FROM ${sql(guard)}`
}
