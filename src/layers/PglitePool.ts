/**
 * The `pg` pool of the embedded database: its one in-process connection (PgliteConnection.ts),
 * and cancels answered at once, without reaching PGlite.
 *
 * PGlite runs each statement to its end: there is nothing to cancel. Sent through the pool,
 * @effect/sql-pg's cancel of an interrupted statement (CancelAnsweringPool.ts) waited for the
 * pool's only connection, which an interrupted transaction holds until the cancel is done, so
 * every statement of the server waited the whole 5 s (docs/performance.md, "An interrupted
 * transaction held the embedded database for 5 s"). Run on PGlite, it answers false, as it does
 * here without the wait.
 */
import { CancelAnsweringPool, NOTHING_CANCELLED } from "./CancelAnsweringPool.ts"

export class PglitePool extends CancelAnsweringPool {
  protected override answerCancel(): Promise<unknown> {
    return Promise.resolve(NOTHING_CANCELLED)
  }
}
