/**
 * Prepared statements, on a Postgres server and on the embedded PGlite: the `pg` client of every
 * pooled connection names each statement with parameters, so Postgres parses and analyzes it
 * once per connection (and, by its own rule, may keep a generic plan after five runs) instead of
 * at every run. Only Bind and Execute go over the wire for a statement the connection has
 * prepared. A turn's statements are the same few dozen texts over and over; this takes about two
 * fifths of a Postgres server's CPU per turn away, and over a quarter of the server's own on the
 * embedded database, which runs in its process (docs/performance.md, "Prepared statements" and
 * "Prepared statements on the embedded database").
 *
 * - A statement without parameters goes as it is (the simple protocol, which also carries
 *   several statements in one text: the migrations).
 * - Names are given to the first MAX_PREPARED_TEXTS distinct texts of the process; texts beyond
 *   those go unnamed, so a connection holds at most that many prepared statements of a generation
 *   (below), whatever builds its SQL (lists of varying length, say).
 * - A prepared statement that reads a table whole (`SELECT *`, `RETURNING *`) fails with
 *   0A000 "cached plan must not change result type" once the table's columns change: a newer
 *   process's migration, in a rolling upgrade. The connection then starts a new generation of
 *   names and prepares again as it goes (the old generation's statements stay in the session
 *   until it closes). The statement is run again at once when it was alone (not in a
 *   transaction); in a transaction it fails, and with it the transaction, once per connection.
 */
import Pg from "pg"

/** The most distinct statement texts a process names (and so prepares on each connection). */
export const MAX_PREPARED_TEXTS = 1_000

/** Each named text's number, shared by the process's connections. */
const numbers = new Map<string, number>()

const numberOf = (text: string): number | undefined => {
  const known = numbers.get(text)
  if (known !== undefined || numbers.size >= MAX_PREPARED_TEXTS) return known
  numbers.set(text, numbers.size)
  return numbers.size - 1
}

/**
 * A prepared statement that a change of its table's columns made stale (see above): 0A000 from
 * Postgres's revalidation of a cached plan, before the statement ran (the routine is named, not
 * the message, which the server's language setting translates).
 */
const isStalePlan = (error: unknown) => {
  const { code, routine } = (error ?? {}) as { code?: unknown; routine?: unknown }
  return code === "0A000" && routine === "RevalidateCachedQuery"
}

type Callback = (error: Error | undefined, result: unknown) => void

/**
 * A `query` call that may be named: text with parameters and a callback, given as (text, values,
 * callback), as @effect/sql-pg runs its statements, or as (config, callback), as it runs a
 * statement whose rows come as arrays (`config` is then the caller's object). Anything else (no
 * parameters, a promise wanted, a cursor, a name given) is passed on as it is.
 */
interface Nameable {
  readonly text: string
  readonly values: Array<unknown>
  readonly config: Pg.QueryConfig | undefined
  readonly callback: Callback
}

const nameable = (args: ReadonlyArray<any>): Nameable | undefined => {
  const [first, second, third] = args
  if (typeof first === "string") {
    return Array.isArray(second) && second.length > 0 && typeof third === "function"
      ? { text: first, values: second, config: undefined, callback: third }
      : undefined
  }
  const isConfig = first !== null && typeof first === "object" && typeof first.submit !== "function" &&
    first.name === undefined && typeof first.text === "string"
  return isConfig && (first.values?.length ?? 0) > 0 && typeof second === "function"
    ? { text: first.text, values: first.values, config: first, callback: second }
    : undefined
}

/**
 * The statement as a query named `name`. Text and values make the query, which is named after:
 * pg copies a config object property by property (`cloneQueryConfig`) at every statement, a cost
 * of its own on this path (docs/performance.md). A caller's config object (its rows as arrays)
 * is passed on with the name.
 */
const namedQuery = (statement: Nameable, name: string, callback: Callback): Pg.Query => {
  if (statement.config !== undefined) return new Pg.Query({ ...statement.config, name }, callback)
  const query = new Pg.Query(statement.text, statement.values, callback)
  ;(query as { name?: string }).name = name
  return query
}

export class PreparingClient extends Pg.Client {
  /** Part of every name this connection gives: a new one after a stale plan, so all are prepared again. */
  #generation = 0

  override query(...args: Array<any>): any {
    const statement = nameable(args)
    const number = statement === undefined ? undefined : numberOf(statement.text)
    if (statement === undefined || number === undefined) return (super.query as (...args: Array<any>) => any)(...args)
    const alone = this.getTransactionStatus() === "I"
    const run = (retried: boolean) => {
      const generation = this.#generation
      super.query(namedQuery(statement, `p${number}g${generation}`, (error: Error | undefined, result: unknown) => {
        if (error === undefined || !isStalePlan(error)) return statement.callback(error, result)
        if (this.#generation === generation) this.#generation++
        if (alone && !retried) return run(true)
        statement.callback(error, result)
      }))
    }
    run(false)
  }
}
