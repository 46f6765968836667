/**
 * Wake-ups of event streams (docs/scale-out.md, "Event streams"): which agents have new events.
 * Timeline announces them inside a transaction that appended events and wakes this process's
 * waiters once it has committed; its waiters subscribe here.
 *
 * - The embedded database (one process): a PubSub of agent ids, nothing more.
 * - Postgres (any number of processes): the same PubSub, plus Postgres LISTEN/NOTIFY. `announce`
 *   runs `pg_notify` inside the appending transaction, which Postgres delivers when the
 *   transaction commits, to every process listening. Each process LISTENs on one connection and feeds what other processes appended into its PubSub; its own
 *   notifications (it woke its waiters itself) prove the LISTEN connection alive. A heartbeat
 *   notification every HEARTBEAT_INTERVAL checks that; when one does not come back, the listener
 *   is started again on a new connection. Timeline's poll remains the safety net meanwhile.
 *
 * Live output (LiveOutput) travels the same way: `broadcast` sends pieces of JSON (each a
 * notification of its own, under Postgres' 8000-byte limit) outside any transaction, so they
 * arrive at once; on the same channel and connection as the wake-ups, so another process sees a
 * step's live output before the wake-up of the transaction that stores it.
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Option, PubSub, type Queue, type Scope, Stream } from "effect"
import { randomBytes } from "node:crypto"
import type { AgentId } from "../../domain/shared/Ids.ts"
import { AppConfig } from "../../layers/AppConfig.ts"

export const CHANNEL = "agent_events"
export const HEARTBEAT_INTERVAL = Duration.seconds(10)

/** Listens until the connection stops echoing this process's own notifications; then returns. */
const listenWhileAlive = (
  sql: PgClient.PgClient,
  origin: string,
  appended: PubSub.PubSub<AgentId>,
  broadcasts: PubSub.PubSub<string>
) =>
  Effect.scoped(Effect.gen(function*() {
    let lastOwnNotice = Date.now()
    yield* sql.listen(CHANNEL).pipe(
      Stream.runForEach((payload) => {
        const separator = payload.indexOf(" ")
        if (payload.slice(0, separator) === origin) {
          lastOwnNotice = Date.now()
          return Effect.void
        }
        const rest = payload.slice(separator + 1)
        return rest.startsWith("{") ? PubSub.publish(broadcasts, rest) : PubSub.publish(appended, rest as AgentId)
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

/** Keeps a LISTEN connection feeding `appended` for the life of the scope, reopening it when it goes silent. */
const listenForOtherProcesses = (
  sql: PgClient.PgClient,
  origin: string,
  appended: PubSub.PubSub<AgentId>,
  broadcasts: PubSub.PubSub<string>
) =>
  listenWhileAlive(sql, origin, appended, broadcasts).pipe(
    Effect.zipRight(Effect.logWarning(
      "The LISTEN connection for event wake-ups stopped delivering notifications; listening again on a new one"
    )),
    Effect.catchAllCause((cause) => Effect.logWarning("Listening for event wake-ups failed; trying again", cause)),
    Effect.zipRight(Effect.sleep(Duration.seconds(1))),
    Effect.forever,
    Effect.forkScoped
  )

export class EventNotifications extends Effect.Service<EventNotifications>()("EventNotifications", {
  scoped: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const config = yield* AppConfig
    const appended = yield* PubSub.sliding<AgentId>(1024)
    const broadcasts = yield* PubSub.sliding<string>(4096)
    const shared = Option.isSome(config.databaseUrl)
    /** Tells this process's notifications from the others'. */
    const origin = randomBytes(8).toString("hex")
    if (shared) yield* listenForOtherProcesses(sql, origin, appended, broadcasts)

    /** Wakes this process's waiters for these agents (their events have committed). */
    const wake = (agentIds: Iterable<AgentId>): Effect.Effect<void> => Effect.asVoid(PubSub.publishAll(appended, agentIds))

    /** Inside the appending transaction: tells the other processes, when it commits, which agents have new events. */
    const announce = (agentIds: ReadonlySet<AgentId>): Effect.Effect<void> =>
      !shared || agentIds.size === 0
        ? Effect.void
        : sql`SELECT pg_notify(${CHANNEL}, ${origin} || ' ' || agent_id) FROM unnest(${[...agentIds]}::text[]) AS agent_id`
          .pipe(Effect.asVoid, Effect.orDie)

    const subscribe: Effect.Effect<Queue.Dequeue<AgentId>, never, Scope.Scope> = PubSub.subscribe(appended)

    /**
     * Outside any transaction: sends each payload (a JSON object, under 8000 bytes) to the other
     * processes at once. Best effort: a failure is logged, never the caller's.
     */
    const broadcast = (payloads: ReadonlyArray<string>): Effect.Effect<void> =>
      !shared || payloads.length === 0
        ? Effect.void
        : sql`SELECT pg_notify(${CHANNEL}, ${origin} || ' ' || payload) FROM unnest(${payloads}::text[]) AS payload`.pipe(
          Effect.asVoid,
          Effect.catchAllCause((cause) => Effect.logWarning("Sending live output to the other processes failed", cause))
        )

    /** What the other processes broadcast. */
    const subscribeBroadcasts: Effect.Effect<Queue.Dequeue<string>, never, Scope.Scope> = PubSub.subscribe(broadcasts)

    return { wake, announce, subscribe, shared, broadcast, subscribeBroadcasts } as const
  })
}) {}
