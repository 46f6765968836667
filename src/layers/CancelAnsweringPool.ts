/**
 * A `pg` pool that answers @effect/sql-pg's cancels itself: the base of the server's two pools,
 * CancelSafePool (a Postgres server) and PglitePool (the embedded database).
 *
 * When a fiber is interrupted during a statement, @effect/sql-pg (0.53) cancels the statement
 * with `SELECT pg_cancel_backend(<pid>)`, sent through the pool like any query, and waits at most
 * 5 s for it before it releases the statement's connection. Through the pool's queue the cancel
 * may wait for a connection, and run late, on whatever statement then runs on that backend. Each
 * pool here answers it in its own way (`answerCancel`), never through its queue.
 */
import Pg from "pg"

/** The statement @effect/sql-pg sends to cancel the statement of the backend process it names. */
const CANCEL_STATEMENT = /^SELECT pg_cancel_backend\((\d+)\)$/

/** What the cancel statement answers when it finds nothing to stop. */
export const NOTHING_CANCELLED = { rows: [{ pg_cancel_backend: false }] }

export abstract class CancelAnsweringPool extends Pg.Pool {
  /** The answer to the cancel (`statement`, as sent) of the statement running on backend `processId`. */
  protected abstract answerCancel(processId: number, statement: string): Promise<unknown>

  override query(...args: Array<any>): any {
    const cancelled = typeof args[0] === "string" ? CANCEL_STATEMENT.exec(args[0]) : null
    if (cancelled === null) return (super.query as (...args: Array<any>) => any)(...args)
    const answered = this.answerCancel(Number(cancelled[1]), args[0])
    const callback = args[args.length - 1]
    if (typeof callback !== "function") return answered
    answered.then((result) => callback(undefined, result), (error) => callback(error))
  }
}
