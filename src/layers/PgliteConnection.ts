/**
 * An in-process connection to the embedded PGlite for `@effect/sql-pg` (its `stream` option): a
 * stream the driver writes the Postgres wire protocol to. What the driver writes at once (a
 * query's Parse, Bind, Describe, Execute and Sync, in one write) runs on PGlite in one call,
 * under PGlite's lock, and its answers go back to the driver in one piece.
 *
 * It replaces a loopback TCP server in front of PGlite (`@electric-sql/pglite-socket`): no port
 * that any local user could connect to without a password, and no socket writes, event-loop hops
 * and PGlite calls per message (docs/performance-record.md, "The embedded database without a socket").
 *
 * Each answer goes back in the event loop's next turn (`setImmediate`), never in the turn that
 * ran the statement. PGlite runs in this process and answers through promises: delivered at once,
 * the driver's next statement, and the next fiber's, ran in the same turn, so a busy server's
 * statements chained for long stretches in which the loop polled no socket. New connections
 * waited in the kernel's queue until the load stopped (docs/performance-record.md, "New connections
 * waited on the embedded database").
 *
 * The driver sends an SSL request only when SSL is asked for (it never is here): it is answered
 * "no" as a server without SSL would. A cancel request has nothing to stop (PGlite runs one
 * statement at a time, to its end): it is dropped, and its connection closed at once, as a
 * server closes it. The driver waits for that close (up to 5 s) before it goes on; it then
 * retires the interrupted statement's connection, as it does for a cancel Postgres did not
 * confirm, and the next connection starts a session of its own (below).
 *
 * PGlite is one session, whatever the number of connections to it, and keeps its state from one
 * connection to the next. Each connection gets a session as a server's would be new: when it
 * starts, a transaction left open is rolled back and the prepared statements are deallocated (a
 * new connection of the driver knows of none). A connection that ends inside a transaction rolls it back, as a
 * server does for a client that goes away, unless another connection has started since: the
 * session is that one's.
 *
 * The notifications of the channels the session listens to come in the answers of the statements
 * that committed them (a commit's answer holds them before its ReadyForQuery): each is told to
 * `onNotification` before the answer goes back to the driver, so before the writer learns that its
 * change committed (PrincipalCache).
 */
import type { PGlite } from "@electric-sql/pglite"
import { Duplex } from "node:stream"

const SSL_REQUEST_CODE = 80877103
const CANCEL_REQUEST_CODE = 80877102
const NO_SSL = Buffer.from("N")
const NOTIFICATION_RESPONSE = 0x41

/** Told the channel of each notification in the answers, as they come. */
export type NotificationListener = (channel: string) => void

/** The channels of the NotificationResponse messages in `answer`, a run of whole backend messages from `offset` on. */
const notifiedChannels = (answer: Buffer, offset: number): Array<string> => {
  const channels: Array<string> = []
  for (let at = offset; at + 5 <= answer.length; at += 1 + answer.readInt32BE(at + 1)) {
    if (answer[at] !== NOTIFICATION_RESPONSE) continue
    // Type, length, the notifying backend's pid, then the channel's name ending in a zero byte.
    const channelStart = at + 9
    channels.push(answer.toString("utf8", channelStart, answer.indexOf(0, channelStart)))
  }
  return channels
}

/** The connection that started the current session of each PGlite: the only one that may end its transaction. */
const sessionHolders = new WeakMap<PGlite, PgliteConnection>()

class PgliteConnection extends Duplex {
  /** Bytes written by the driver and not yet run: part of a message. */
  private pending: Buffer = Buffer.alloc(0)
  /** Whether the startup message has run (until then, messages carry no type byte). */
  private started = false

  private readonly db: PGlite
  private readonly onNotification: NotificationListener | undefined

  constructor(db: PGlite, onNotification: NotificationListener | undefined) {
    super()
    this.db = db
    this.onNotification = onNotification
  }

  /** The length of the complete message at `offset` of `pending`, or undefined while it is partial. */
  private messageLengthAt(offset: number): number | undefined {
    const header = this.started ? 5 : 4
    if (this.pending.length - offset < header) return undefined
    const length = this.started ? 1 + this.pending.readInt32BE(offset + 1) : this.pending.readInt32BE(offset)
    return this.pending.length - offset >= length ? length : undefined
  }

  /** Takes the complete messages at the start of `pending`: during startup one at a time, after it all at once. */
  private takeMessages(): Buffer | undefined {
    let length = 0
    for (let next = this.messageLengthAt(0); next !== undefined; next = this.messageLengthAt(length)) {
      length += next
      if (!this.started) break
    }
    if (length === 0) return undefined
    const messages = this.pending.subarray(0, length)
    this.pending = this.pending.subarray(length)
    return messages
  }

  /** Runs the messages on PGlite; what it answers. */
  private run(messages: Uint8Array): Promise<Array<Uint8Array>> {
    const answers: Array<Uint8Array> = []
    return this.db.runExclusive(() =>
      this.db.execProtocolRawStream(messages, { onRawData: (data) => answers.push(data.slice()) })
    ).then(() => answers)
  }

  /** Makes the session this connection's, as new: no transaction, no prepared statements. */
  private async startSession(): Promise<void> {
    sessionHolders.set(this.db, this)
    if (this.db.isInTransaction()) await this.db.exec("ROLLBACK")
    await this.db.exec("DEALLOCATE ALL")
  }

  /** Runs the complete messages written so far, in order; their answers go back in one piece, in the loop's next turn. */
  private async runMessages(): Promise<void> {
    const answers: Array<Uint8Array> = []
    for (let messages = this.takeMessages(); messages !== undefined; messages = this.takeMessages()) {
      if (!this.started) {
        const code = messages.readInt32BE(4)
        if (code === SSL_REQUEST_CODE) {
          answers.push(NO_SSL)
          continue
        }
        if (code === CANCEL_REQUEST_CODE) {
          // Nothing to cancel; the connection ends as a server ends it, once the request is read.
          setImmediate(() => this.destroy())
          return
        }
        await this.startSession()
        this.started = true
      }
      for (const answer of await this.run(messages)) answers.push(answer)
    }
    if (answers.length === 0) return
    const answer = Buffer.concat(answers)
    if (this.onNotification !== undefined) {
      // The SSL request's answer is the only one that is not a whole message.
      for (const channel of notifiedChannels(answer, answers[0] === NO_SSL ? 1 : 0)) this.onNotification(channel)
    }
    setImmediate(() => this.push(answer))
  }

  private receive(bytes: Buffer, done: (error?: Error | null) => void) {
    this.pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes])
    this.runMessages().then(() => done(), done)
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void) {
    this.receive(chunk, done)
  }

  /** What the driver writes corked (a query's Parse, Bind, Describe, Execute and Sync) runs in one piece. */
  override _writev(chunks: Array<{ chunk: Buffer }>, done: (error?: Error | null) => void) {
    this.receive(Buffer.concat(chunks.map(({ chunk }) => chunk)), done)
  }

  override _read() {
    // Answers are pushed as their messages run.
  }

  /** The end goes after the answers still on their way. */
  override _final(done: (error?: Error | null) => void) {
    setImmediate(() => {
      this.push(null)
      done()
    })
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void) {
    if (!this.started || sessionHolders.get(this.db) !== this || this.db.closed || !this.db.isInTransaction()) return done(error)
    // A rollback that fails leaves nothing to undo: the database is closing.
    this.db.exec("ROLLBACK").then(() => done(error), () => done(error))
  }

  // What the `pg` driver calls on a socket (test/shared/PgliteConnection.test.ts connects with it).
  connect() {
    process.nextTick(() => this.emit("connect"))
    return this
  }
  setNoDelay() {
    return this
  }
  setKeepAlive() {
    return this
  }
  ref() {
    return this
  }
  unref() {
    return this
  }
}

/** A new connection to `db` each time the driver opens one; `onNotification` is told of the notifications the session receives. */
export const pgliteConnections = (db: PGlite, onNotification?: NotificationListener) => (): Duplex =>
  new PgliteConnection(db, onNotification)
