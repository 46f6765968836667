/**
 * Wake-ups of event streams (docs/scale-out.md, "Event streams"): which agents have new events.
 * Timeline publishes here once a transaction that appended events has committed, and its waiters
 * subscribe here.
 *
 * - `inProcess` (the embedded database, one process): a PubSub of agent ids, nothing more.
 * - `shared` (Postgres, any number of processes): the same PubSub, plus Postgres LISTEN/NOTIFY.
 *   The append's own statement calls `pg_notify` (`notifyOnCommit`), which Postgres delivers when
 *   the transaction commits, to every process listening, with no statement of its own. Each process
 *   LISTENs on one connection and feeds what other processes appended into its PubSub; its own
 *   notifications (it woke its waiters itself) prove the LISTEN connection alive. A heartbeat
 *   notification every HEARTBEAT_INTERVAL checks that; when one does not come back, the listener
 *   is started again on a new connection. Timeline's poll remains the safety net meanwhile.
 */
import { PgClient } from "@effect/sql-pg"
import type { Statement } from "@effect/sql"
import { Context, Duration, Effect, Layer, PubSub, type Queue, type Scope, Stream } from "effect"
import { randomBytes } from "node:crypto"
import type { AgentId } from "../../domain/shared/Ids.ts"

export const CHANNEL = "agent_events"
export const HEARTBEAT_INTERVAL = Duration.seconds(10)

export interface EventNotificationsShape {
  /** Wakes this process's waiters for these agents (their events have committed). */
  readonly wake: (agentIds: Iterable<AgentId>) => Effect.Effect<void>
  readonly subscribe: Effect.Effect<Queue.Dequeue<AgentId>, never, Scope.Scope>
  /**
   * A fragment for the select list of a statement of the appending transaction (`, pg_notify(...)`,
   * or nothing): the other processes are told when the transaction commits.
   */
  readonly notifyOnCommit: (agentId: AgentId) => Statement.Fragment
}

const makeLocal = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const appended = yield* PubSub.sliding<AgentId>(1024)
  return {
    appended,
    shape: {
      wake: (agentIds: Iterable<AgentId>) => Effect.asVoid(PubSub.publishAll(appended, agentIds)),
      subscribe: PubSub.subscribe(appended),
      notifyOnCommit: () => sql``
    } satisfies EventNotificationsShape
  }
})

/** Listens until the connection stops echoing this process's own notifications; then returns. */
const listenWhileAlive = (sql: PgClient.PgClient, origin: string, appended: PubSub.PubSub<AgentId>) =>
  Effect.scoped(Effect.gen(function*() {
    let lastOwnNotice = Date.now()
    yield* sql.listen(CHANNEL).pipe(
      Stream.runForEach((payload) => {
        const separator = payload.indexOf(" ")
        if (payload.slice(0, separator) === origin) {
          lastOwnNotice = Date.now()
          return Effect.void
        }
        return PubSub.publish(appended, payload.slice(separator + 1) as AgentId)
      }),
      Effect.forkScoped
    )
    yield* Effect.sleep(HEARTBEAT_INTERVAL)
    while (true) {
      const sentAt = Date.now()
      // Not `sql.notify`: it sends `NOTIFY channel, $1`, which Postgres refuses (NOTIFY takes no parameters).
      yield* Effect.ignore(sql`SELECT pg_notify(${CHANNEL}, ${`${origin} `})`)
      yield* Effect.sleep(HEARTBEAT_INTERVAL)
      if (lastOwnNotice < sentAt) return
    }
  }))

export class EventNotifications extends Context.Tag("EventNotifications")<EventNotifications, EventNotificationsShape>() {
  static readonly inProcess = Layer.effect(EventNotifications, Effect.map(makeLocal, (local) => local.shape))

  static readonly shared = Layer.scoped(
    EventNotifications,
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const { appended, shape } = yield* makeLocal
      /** Tells this process's notifications from the others'. */
      const origin = randomBytes(8).toString("hex")
      yield* listenWhileAlive(sql, origin, appended).pipe(
        Effect.zipRight(Effect.logWarning(
          "The LISTEN connection for event wake-ups stopped delivering notifications; listening again on a new one"
        )),
        Effect.catchAllCause((cause) => Effect.logWarning("Listening for event wake-ups failed; trying again", cause)),
        Effect.zipRight(Effect.sleep(Duration.seconds(1))),
        Effect.forever,
        Effect.forkScoped
      )
      return {
        ...shape,
        notifyOnCommit: (agentId: AgentId) => sql`, pg_notify(${CHANNEL}, ${`${origin} ${agentId}`})`
      }
    })
  )
}
