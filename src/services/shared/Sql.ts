/**
 * What repositories do with database failures. A failed query or a row that does not decode is
 * a defect: the cause is kept, and the request that met it is logged and answered with 500. The
 * violations of a constraint that guards a rule (a unique name, a row still referenced) become
 * these typed failures, which the service turns into the error its caller sees. A foreign-key
 * violation no service expected (a race with a request deleting what this one refers to) is
 * recognised by the HTTP edge in the defect (`foreignKeyViolation`, src/layers/http/ErrorMapping.ts).
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

/**
 * A foreign key refused a change. `side` says which: `referencing`, a row written (inserted, or
 * updated) that refers to a row that is not there, as when that row was deleted meanwhile;
 * `referenced`, a row deleted (or its key changed) while another still refers to it.
 */
export class ForeignKeyViolation extends Schema.TaggedError<ForeignKeyViolation>()("ForeignKeyViolation", {
  constraint: Schema.String,
  side: Schema.Literals(["referencing", "referenced"])
}) {
  override get message() {
    return this.side === "referencing"
      ? `The foreign key ${this.constraint} refused a row that refers to one that is not there`
      : `The foreign key ${this.constraint} refused to delete a row still referred to`
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

/** A text field of the server's error (`constraint`, `message`), when it has that field. */
const textField = (fields: object, name: string): string | undefined => {
  const value: unknown = Reflect.get(fields, name)
  return typeof value === "string" ? value : undefined
}

/** The constraint a failed statement violated, when it failed with that kind of violation. */
const violated = (error: unknown, code: string): string | undefined => {
  const fields = serverError(error, code)
  return fields === undefined ? undefined : textField(fields, "constraint") ?? "unknown"
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

/**
 * Postgres words a violation on the referenced side "update or delete on table ... violates
 * foreign key constraint ... on table ...", and one on the referencing side "insert or update on
 * table ..." (ri_triggers.c); the fields of the error are the same for both. The embedded
 * database's messages are these; a Postgres server set to another language (`lc_messages`)
 * translates them, and its violations are then all taken as the referencing side's.
 */
const REFERENCED_SIDE = /^update or delete on table /

/** The foreign-key violation a statement failed with, if it failed with one. */
export const foreignKeyViolation = (error: unknown): ForeignKeyViolation | undefined => {
  const fields = serverError(error, FOREIGN_KEY_VIOLATION)
  if (fields === undefined) return undefined
  return new ForeignKeyViolation({
    constraint: textField(fields, "constraint") ?? "unknown",
    side: REFERENCED_SIDE.test(textField(fields, "message") ?? "") ? "referenced" : "referencing"
  })
}

/** A foreign-key violation is `ForeignKeyViolation`; any other failure is a defect. */
export const foreignKeyOrDie = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, ForeignKeyViolation, R> =>
  Effect.catch(self, (error) => {
    const violation = foreignKeyViolation(error)
    return violation === undefined ? Effect.die(error) : Effect.fail(violation)
  })

/** A fragment of a statement, taken by a repository's statement that other repositories' fragments complete. */
export const SqlFragment = Schema.declare(Statement.isFragment)

/** A lock a read takes on the rows it finds, held until the transaction ends. */
export const RowLock = Schema.Literals(["none", "share", "update"])
export type RowLock = typeof RowLock.Type

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
