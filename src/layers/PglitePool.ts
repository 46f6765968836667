/**
 * The `pg` pool of the embedded database: its one in-process connection (PgliteConnection.ts),
 * and cancels answered at once, without reaching PGlite.
 *
 * When a fiber is interrupted during a statement, @effect/sql-pg cancels the statement with
 * `SELECT pg_cancel_backend(<pid>)`, sent through the pool, and waits at most 5 s for it before it
 * releases the statement's connection. PGlite runs each statement to its end: there is nothing to
 * cancel. Through the pool, the cancel waited for the pool's only connection, which an
 * interrupted transaction holds until the cancel is done, so every statement of the server waited
 * the whole 5 s (docs/performance.md, "An interrupted transaction held the embedded database for
 * 5 s"). Run on PGlite, it answers false, as it does here without the wait.
 */
import Pg from "pg"
import { CANCEL_STATEMENT, NOTHING_CANCELLED } from "./CancelSafePool.ts"

export class PglitePool extends Pg.Pool {
  override query(...args: Array<any>): any {
    if (typeof args[0] !== "string" || !CANCEL_STATEMENT.test(args[0])) {
      return (super.query as (...args: Array<any>) => any)(...args)
    }
    const callback = args[args.length - 1]
    if (typeof callback !== "function") return Promise.resolve(NOTHING_CANCELLED)
    process.nextTick(() => callback(undefined, NOTHING_CANCELLED))
  }
}
