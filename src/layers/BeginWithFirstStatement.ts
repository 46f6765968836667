/**
 * A transaction's BEGIN sent with its first statement, on a Postgres server and on the embedded
 * PGlite. `@effect/sql` opens a transaction by running BEGIN and waiting for its answer, then runs
 * the first statement: two round trips, two socket writes and two answers to read. Postgres
 * answers BEGIN with nothing but its tag, so the connection (PreparedStatements.ts) answers it at
 * once and sends it in front of the next statement, in the same write and under the same Sync:
 * Bind and Execute of BEGIN (prepared once per connection, so it brings no ParseComplete the
 * driver would take for the statement's), then the statement's own messages (docs/performance.md,
 * "BEGIN with the first statement").
 *
 * Nothing runs outside the transaction: should BEGIN fail, Postgres skips to the Sync and the
 * statement behind it never runs (its caller gets BEGIN's error, and rolls back, which Postgres
 * answers with a warning). A COMMIT or ROLLBACK with no statement since BEGIN is an empty
 * transaction, answered at once without sending either.
 */
import type Pg from "pg"
import PgDriver from "pg"

/** The name BEGIN is prepared under on every connection (distinct from the `p<n>g<m>` names). */
export const BEGIN_STATEMENT = "begin"

/** The three commands that open and end a transaction, as `@effect/sql` sends them. */
export type TransactionCommand = "BEGIN" | "COMMIT" | "ROLLBACK"

/** A driver query's callback (the driver passes `null` for no error). */
export type Callback = (error: Error | null | undefined, result: unknown) => void

/**
 * The transaction command of a `query` call, as `@effect/sql-pg` makes it: the text with no
 * parameters and a callback.
 */
export const transactionCommandOf = (
  args: ReadonlyArray<any>
): { readonly command: TransactionCommand; readonly callback: Callback } | undefined => {
  const [text, values, callback] = args
  if (text !== "BEGIN" && text !== "COMMIT" && text !== "ROLLBACK") return undefined
  return Array.isArray(values) && values.length === 0 && typeof callback === "function"
    ? { command: text, callback }
    : undefined
}

/** What Postgres answers a transaction command with, as the driver hands it on. */
export const commandResult = (command: TransactionCommand) => ({ command, rowCount: null, oid: null, rows: [], fields: [] })

/** The parts of the driver's query the prefix builds on (they are not in its type declarations). */
interface DriverQuery extends Pg.Query {
  submit(connection: Pg.Connection): Error | null
  handleCommandComplete(message: unknown, connection: Pg.Connection): void
}

/** How a statement's query is made: the driver's own, or one with BEGIN in front. */
export interface QueryConstructor<Q extends Pg.Query = Pg.Query> {
  new(config: Pg.QueryConfig, callback: Callback): Q
  new(text: string, values: Array<unknown>, callback: Callback): Q
}

const DriverQuery = PgDriver.Query as unknown as QueryConstructor<DriverQuery>

/**
 * A query that runs BEGIN first, in the same write: Bind and Execute of the connection's prepared
 * BEGIN, then the query's own messages, which end with the one Sync. The first CommandComplete
 * answered is BEGIN's, and is not the query's.
 */
export class QueryAfterBegin extends DriverQuery {
  #beginAnswered = false

  override submit(connection: Pg.Connection): Error | null {
    const stream = connection.stream as Pg.Connection["stream"] & { cork?: () => void; uncork?: () => void }
    stream.cork?.()
    try {
      connection.bind({ statement: BEGIN_STATEMENT }, false)
      connection.execute(null, false)
      return super.submit(connection)
    } finally {
      stream.uncork?.()
    }
  }

  override handleCommandComplete(message: unknown, connection: Pg.Connection): void {
    if (this.#beginAnswered) return super.handleCommandComplete(message, connection)
    this.#beginAnswered = true
  }
}
