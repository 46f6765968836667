/**
 * The `pg` pool under @effect/sql-pg on a Postgres server, made safe against a cancel that stops
 * another statement.
 *
 * When a fiber is interrupted during a statement, @effect/sql-pg cancels the statement with
 * `SELECT pg_cancel_backend(<pid>)`, sent through the pool (so on another connection), and waits
 * at most 5 s for it before it releases the statement's connection (CancelAnsweringPool.ts). A
 * cancel stops whatever the backend process runs when it arrives. When every connection is busy,
 * the cancel waits in the pool's queue (the 5 s end the wait, not the queued query), the
 * interrupted statement's connection goes back to the pool, and the cancel, run at last, stops
 * the statement of whoever took that connection next: it fails with 57014 "canceling statement
 * due to user request" (Effect-TS/effect#8068; fixed in the @effect/sql-pg of Effect 4 only).
 * Seen here with three processes under load: an event stream's read was cancelled so, and the
 * stream ended.
 *
 * This pool does two things:
 * - It sends a cancel at once, on a connection of its own (opened for it, closed after), instead
 *   of through the pool's queue: it reaches the backend while the interrupted statement's
 *   holder still waits for it, so it stops that statement or, when it has completed, nothing (a
 *   backend waiting for its next command ignores a cancel). This covers a connection its holder
 *   keeps using after the interruption (a reserved connection), as long as the holder waits for
 *   the interruption to finish.
 * - It retires the connection: once a cancel of its backend is asked for while it is checked
 *   out, it is closed when released, never handed out again, so even a cancel that could not be
 *   delivered in time finds its process gone.
 * A cancel of a connection that is not checked out is not sent: nothing of the one who asked
 * runs there any more. Cancels of one backend asked while one is on its way share it (one
 * connection, not one each): @effect/cluster sends its ~300 shard releases at once on its one
 * lock connection at shutdown, where `pg` queues them, and interrupts them together; each used to
 * open a connection of its own, 300 in a second, enough to exhaust `max_connections`.
 *
 * What is left: a statement that completes in the instant its fiber is interrupted releases its
 * connection before the cancel is asked for; if another fiber has taken it in between, that
 * fiber's statement is cancelled. The window is the time between two turns of the event loop,
 * where the race above lasted as long as the pool stayed busy. And a holder that goes on without
 * waiting for the interruption (@effect/cluster's shard-lock connection, at shutdown) may have
 * its next statement cancelled; the cluster rebuilds that connection on an error.
 */
import Pg from "pg"
import { CancelAnsweringPool, NOTHING_CANCELLED } from "./CancelAnsweringPool.ts"

/** The backend process of a connection (set by `pg` when it connects; not in its types). */
const processIdOf = (client: Pg.PoolClient): number | undefined => (client as { processID?: number }).processID

type ConnectCallback = (err: Error | undefined, client: Pg.PoolClient | undefined, release: (release?: unknown) => void) => void

export class CancelSafePool extends CancelAnsweringPool {
  /** Every open connection, by its backend process. */
  readonly #byProcessId = new Map<number, Pg.PoolClient>()
  readonly #checkedOut = new Set<Pg.PoolClient>()
  /** Connections a cancel was asked for while they were checked out: closed when released. */
  readonly #retiring = new WeakSet<Pg.PoolClient>()
  /** The cancel on its way to each backend: the cancels asked meanwhile share it. */
  readonly #cancelling = new Map<number, Promise<unknown>>()

  constructor(config?: Pg.PoolConfig) {
    super(config)
    this.on("connect", (client) => {
      const processId = processIdOf(client)
      if (processId !== undefined) this.#byProcessId.set(processId, client)
    })
    this.on("remove", (client) => {
      const processId = processIdOf(client)
      if (processId !== undefined && this.#byProcessId.get(processId) === client) this.#byProcessId.delete(processId)
    })
  }

  override connect(): Promise<Pg.PoolClient>
  override connect(callback: ConnectCallback): void
  override connect(callback?: ConnectCallback): Promise<Pg.PoolClient> | void {
    if (callback === undefined) {
      return new Promise((resolve, reject) => this.connect((err, client) => (client === undefined ? reject(err ?? new Error("No client returned")) : resolve(client))))
    }
    super.connect((err, client, release) => {
      if (err || !client) return callback(err, client, release)
      this.#checkedOut.add(client)
      const releaseOrRetire = (error?: unknown) => {
        this.#checkedOut.delete(client)
        release(error || (this.#retiring.has(client) ? new Error("a cancel was sent to this connection's statement") : undefined))
      }
      client.release = releaseOrRetire
      callback(undefined, client, releaseOrRetire)
    })
  }

  /** Cancels the statement of the connection to `processId`, when it is checked out: retired, and the cancel sent at once. */
  protected override answerCancel(processId: number, statement: string): Promise<unknown> {
    const client = this.#byProcessId.get(processId)
    if (client === undefined || !this.#checkedOut.has(client)) {
      // Nothing of the one who asked runs there any more: answered as a cancel that found nothing to stop.
      return Promise.resolve(NOTHING_CANCELLED)
    }
    this.#retiring.add(client)
    const inFlight = this.#cancelling.get(processId)
    if (inFlight !== undefined) return inFlight
    const sent = this.#sendAtOnce(statement).finally(() => this.#cancelling.delete(processId))
    this.#cancelling.set(processId, sent)
    return sent
  }

  /** Runs `statement` on a connection opened for it alone, closed after. */
  async #sendAtOnce(statement: string) {
    const canceller = new Pg.Client(this.options)
    canceller.on("error", () => undefined)
    try {
      await canceller.connect()
      return await canceller.query(statement)
    } finally {
      await canceller.end().catch(() => undefined)
    }
  }
}
