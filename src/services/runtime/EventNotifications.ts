/**
 * Wake-ups of event streams (docs/scale-out.md, "Event streams"; docs/performance-record.md): which
 * agents have new events. Timeline wakes this process's waiters once a transaction that appended
 * events has committed; a waiter waits for one agent.
 *
 * - Waiters are kept per agent, so an append wakes only the streams of its agent (not every
 *   stream of the process), and a wake-up from this process hands them the events it committed:
 *   a stream that had read up to just before them sends them without reading the timeline.
 * - The last committed sequence of each agent that this process knows of (the highest it was
 *   told, by its own appends or by another process's notification; bounded, least recently
 *   told forgotten first): a stream that has sent up to it waits without reading again.
 * - Postgres (any number of processes): while another process may be listening, the statement
 *   that inserts events also runs `pg_notify` (`notice`), which Postgres delivers when the
 *   transaction commits, to every process listening, with the agent's last sequence. Each
 *   process LISTENs on one connection and wakes its waiters for what other processes appended;
 *   its own notifications (it woke its waiters itself) prove the LISTEN connection alive. A
 *   heartbeat notification every HEARTBEAT_INTERVAL checks that; when one does not come back, the
 *   listener is started again on a new connection. The catch-up read remains the safety net
 *   meanwhile.
 * - The safety net under all of it: every CATCH_UP_INTERVAL one read of the last sequences of
 *   the agents that have waiters; the waiters of an agent whose timeline went further than this
 *   process knew (a notification missed) are woken to read it. One read for all the streams of
 *   the process, not one per stream (docs/performance-record.md).
 *
 * Live output (LiveOutput) travels the same way: `broadcast` sends pieces of JSON (each a
 * notification of its own, under Postgres' 8000-byte limit) outside any transaction, so they
 * arrive at once; on the same channel and connection as the wake-ups, so another process sees a
 * step's live output before the wake-up of the transaction that stores it.
 *
 * Both are sent only while another process may be listening (`othersListening`): every
 * process's heartbeat says it is there; a process that starts listening asks the others to
 * answer at once (a hello), and counts them as there until it has heard its own hello and then
 * waited ANSWER_GRACE for their answers. A process alone on its database sends neither
 * (docs/scale-out.md); only its heartbeats.
 *
 * Signals (`signal`) travel the same way too: a topic and ids, for the other processes'
 * listeners of that topic (a machine's mailbox changed, a machine request's result stored),
 * sent after the commit they are about, outside any transaction.
 *
 * Payloads on the channel: `<origin> <agent id> <last sequence>` (a wake-up), `<origin> {...}`
 * (live output), `<origin> #<topic> <id> <id>...` (a signal), `<origin> ` (a heartbeat) and
 * `<origin> ?` (a hello, answered by a heartbeat).
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Duration, Effect, Exit, Layer, Option, Stream, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import type { AgentId } from "../../domain/shared/Ids.ts"
import type { AgentEvent } from "../../domain/runtime/Events.ts"
import { KeyedCallbacks } from "../shared/KeyedCallbacks.ts"
import { AppConfig } from "../../layers/AppConfig.ts"
import type { Notice } from "./AgentEventsRepository.ts"
import { AgentsRepository } from "./AgentsRepository.ts"

export const CHANNEL = "agent_events"
const HEARTBEAT_INTERVAL = Duration.seconds(10)

/** Another process counts as listening until this long after it was last heard (three heartbeats). */
const PEER_TIMEOUT = Duration.times(HEARTBEAT_INTERVAL, 3)

/** How long a process that has started listening waits for the others to answer its hello. */
export const ANSWER_GRACE = Duration.seconds(2)

/** How often a new LISTEN connection sends a heartbeat until it hears its own. */
const CONFIRM_INTERVAL = Duration.millis(100)

/** The rest of a hello: "I have started listening; answer with a heartbeat". */
const HELLO = "?"

/** How often the agents with waiters are read, in case a notification was missed. */
export const CATCH_UP_INTERVAL = Duration.seconds(5)

/** Agents whose last committed sequence is remembered at most. */
const MAX_KNOWN_AGENTS = 50_000

/** What woke a waiter: the events this process committed for the agent, or nothing (read them). */
export type Wake = ReadonlyArray<AgentEvent> | undefined

/** Where a process's notifications go: the agent, and its last sequence when the notice names it. */
type Notified = (agentId: AgentId, lastSequence: number | undefined) => Effect.Effect<void>

/**
 * Whether another process may be listening: assumed while this process's LISTEN connection is
 * not yet known to hear everything, and during ANSWER_GRACE after its hello; then only when
 * another process was heard within PEER_TIMEOUT.
 */
class OtherProcesses {
  private lastHeard = Number.NEGATIVE_INFINITY
  /** When this process's current LISTEN connection heard its own hello; undefined until then. */
  private helloHeardAt: number | undefined = undefined

  heard() {
    this.lastHeard = Date.now()
  }
  listening() {
    this.helloHeardAt = undefined
  }
  helloHeard() {
    this.helloHeardAt = Date.now()
  }
  mayBeListening(): boolean {
    const now = Date.now()
    return this.helloHeardAt === undefined ||
      now - this.helloHeardAt < Duration.toMillis(ANSWER_GRACE) ||
      now - this.lastHeard < Duration.toMillis(PEER_TIMEOUT)
  }
}

/** Called with each piece of live output another process broadcast (its JSON), synchronously, in the order heard. */
export type BroadcastListener = (payload: string) => void

/** What is done with the ids of each signal of its topic another process sent: run on a fiber of its own. */
export type SignalListener = (ids: ReadonlyArray<string>) => Effect.Effect<void>

/** What starts a signal's payload, before its topic. */
const SIGNAL = "#"

/** The most ids one signal's notification carries (ids of about 30 characters, under Postgres' 8000 bytes). */
const IDS_PER_SIGNAL = 200

/**
 * What a process hears from the others: wake-ups (`notified`), live output (`broadcasts`),
 * signals (by topic), and that they are there.
 */
interface Listeners {
  readonly notified: Notified
  readonly broadcasts: ReadonlySet<BroadcastListener>
  readonly signals: KeyedCallbacks<string, SignalListener>
  readonly others: OtherProcesses
}

/**
 * Listens until the connection stops echoing this process's own notifications; then returns.
 * First it sends heartbeats until it hears one (from then on the connection hears everything),
 * then a hello, which the other processes answer with a heartbeat each.
 */
const listenWhileAlive = (sql: PgClient.PgClient, origin: string, listeners: Listeners) =>
  Effect.scoped(Effect.gen(function*() {
    const scope = yield* Effect.scope
    const send = (rest: string) => Effect.ignore(sql.notify(CHANNEL, `${origin} ${rest}`))
    let lastOwnNotice = 0
    let helloSent = false
    listeners.others.listening()
    yield* Stream.unwrap(Effect.map(sql.listen(CHANNEL), Stream.fromQueue)).pipe(
      Stream.runForEach(({ payload }) => {
        const separator = payload.indexOf(" ")
        const rest = payload.slice(separator + 1)
        if (payload.slice(0, separator) === origin) {
          lastOwnNotice = Date.now()
          if (helloSent && rest === HELLO) listeners.others.helloHeard()
          return Effect.void
        }
        listeners.others.heard()
        if (rest === HELLO) return Effect.asVoid(Effect.forkIn(send(""), scope))
        if (rest.startsWith(SIGNAL)) {
          const [topic, ...ids] = rest.slice(SIGNAL.length).split(" ")
          // Forked, so that a listener's work (a read) never holds up the notifications after it.
          return Effect.forEach(listeners.signals.of(topic) ?? [], (listener) => Effect.forkIn(listener(ids), scope), {
            discard: true
          })
        }
        if (rest.startsWith("{")) {
          // Handed over before the next notification is read, so that live output reaches its
          // streams before the wake-up of the append that stores it, which follows it on the channel.
          for (const listener of listeners.broadcasts) listener(rest)
          return Effect.void
        }
        const [agentId, sequence] = rest.split(" ")
        if (agentId === undefined || agentId === "") return Effect.void
        const lastSequence = sequence === undefined ? undefined : Number(sequence)
        return listeners.notified(agentId as AgentId, Number.isSafeInteger(lastSequence) ? lastSequence : undefined)
      }),
      Effect.forkScoped
    )
    const confirmBy = Date.now() + Duration.toMillis(HEARTBEAT_INTERVAL)
    while (lastOwnNotice === 0) {
      if (Date.now() > confirmBy) return
      yield* send("")
      yield* Effect.sleep(CONFIRM_INTERVAL)
    }
    helloSent = true
    yield* send(HELLO)
    while (true) {
      yield* Effect.sleep(HEARTBEAT_INTERVAL)
      const sentAt = Date.now()
      yield* send("")
      yield* Effect.sleep(HEARTBEAT_INTERVAL)
      if (lastOwnNotice < sentAt) return
    }
  }))

/** Keeps a LISTEN connection feeding `listeners` for the life of the scope, reopening it when it goes silent. */
const listenForOtherProcesses = (sql: PgClient.PgClient, origin: string, listeners: Listeners) =>
  listenWhileAlive(sql, origin, listeners).pipe(
    Effect.andThen(Effect.logWarning(
      "The LISTEN connection for event wake-ups stopped delivering notifications; listening again on a new one"
    )),
    Effect.catchCause((cause) => Effect.logWarning("Listening for event wake-ups failed; trying again", cause)),
    Effect.andThen(Effect.sleep(Duration.seconds(1))),
    Effect.forever,
    Effect.forkScoped
  )

const make = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const config = yield* AppConfig
  const agents = yield* AgentsRepository
  const shared = Option.isSome(config.databaseUrl)
  /** Tells this process's notifications from the others'. */
  const origin = randomBytes(8).toString("hex")
  const waiters = new KeyedCallbacks<AgentId, (wake: Wake) => void>()
  /** The highest committed sequence this process was told of, per agent, least recently told first. */
  const known = new Map<AgentId, number>()

  const tell = (agentId: AgentId, lastSequence: number) => {
    const previous = known.get(agentId)
    known.delete(agentId)
    known.set(agentId, previous === undefined ? lastSequence : Math.max(previous, lastSequence))
    if (known.size > MAX_KNOWN_AGENTS) known.delete(known.keys().next().value!)
  }

  const wakeWaiters = (agentId: AgentId, wake: Wake) => {
    const callbacks = waiters.take(agentId)
    if (callbacks !== undefined) for (const callback of callbacks) callback(wake)
  }

  /** Another process appended events for the agent (its last sequence, when the notice names it). */
  const notified: Notified = (agentId, lastSequence) =>
    Effect.sync(() => {
      // A notice without the sequence (a process of an earlier version): what this process knows may be behind.
      if (lastSequence === undefined) known.delete(agentId)
      else tell(agentId, lastSequence)
      wakeWaiters(agentId, undefined)
    })

  /** Wakes the waiters of the agents whose timelines went further than this process knew. */
  const catchUp = Effect.suspend(() => {
    const waitedFor = waiters.keys()
    if (waitedFor.length === 0) return Effect.void
    return Effect.map(agents.lastSequences(waitedFor), (rows) => {
      for (const { id, last_sequence } of rows) {
        const lastKnown = known.get(id)
        if (lastKnown !== undefined && lastKnown >= last_sequence) continue
        tell(id, last_sequence)
        wakeWaiters(id, undefined)
      }
    })
  })
  yield* Effect.sleep(CATCH_UP_INTERVAL).pipe(
    Effect.andThen(catchUp),
    Effect.catchCause((cause) => Effect.logWarning("The catch-up read of the waited-for agents' last sequences failed", cause)),
    Effect.forever,
    Effect.forkScoped
  )

  const broadcasts = new Set<BroadcastListener>()
  const signals = new KeyedCallbacks<string, SignalListener>()
  const others = new OtherProcesses()
  if (shared) yield* listenForOtherProcesses(sql, origin, { notified, broadcasts, signals, others })

  /** Whether another process may hear a `broadcast` now (never on the embedded database). */
  const othersListening = (): boolean => shared && others.mayBeListening()

  /** Wakes this process's waiters for these agents with the events just committed (in sequence order). */
  const wake = (appended: ReadonlyMap<AgentId, ReadonlyArray<AgentEvent>>): Effect.Effect<void> =>
    Effect.sync(() => {
      for (const [agentId, events] of appended) {
        if (events.length === 0) continue
        tell(agentId, events[events.length - 1].sequence)
        wakeWaiters(agentId, events)
      }
    })

  /**
   * The notification that tells the other processes, when the appending transaction commits,
   * that the agent has events up to its last sequence: sent by the statement that appends them
   * (AgentEventsRepository.append, which adds the sequence). None while no other process may be
   * listening (always on the embedded database).
   */
  const notice = (agentId: AgentId): Notice | null =>
    othersListening() ? { channel: CHANNEL, prefix: `${origin} ${agentId}` } : null

  /** The highest sequence of the agent this process knows to be committed, if it knows one. */
  const lastKnown = (agentId: AgentId): number | undefined => known.get(agentId)

  /**
   * Registers a waiter for the agent's next wake-up, for the life of the scope (register before
   * reading the timeline, so a commit between the read and the wait is not missed): the wait,
   * the wake-up or none once `within` has passed. A timer ends it, not a fiber racing it
   * (`Effect.timeout`): every stream of an agent waits at least twice a turn.
   */
  const nextWake = (
    agentId: AgentId,
    within: Duration.Duration
  ): Effect.Effect<Effect.Effect<Option.Option<Wake>>, never, Scope.Scope> =>
    Effect.gen(function*() {
      const woken = Deferred.makeUnsafe<Option.Option<Wake>>()
      yield* waiters.register(agentId, (wake: Wake) => Deferred.doneUnsafe(woken, Exit.succeed(Option.some(wake))))
      yield* Effect.acquireRelease(
        Effect.sync(() => setTimeout(() => Deferred.doneUnsafe(woken, Exit.succeed(Option.none())), Duration.toMillis(within))),
        (timer) => Effect.sync(() => clearTimeout(timer))
      )
      return Deferred.await(woken)
    })

  /**
   * Outside any transaction: sends each payload (a JSON object, under 8000 bytes) to the other
   * processes at once. Best effort: a failure is logged, never the caller's.
   */
  const broadcast = (payloads: ReadonlyArray<string>): Effect.Effect<void> =>
    !shared || payloads.length === 0
      ? Effect.void
      : sql`SELECT pg_notify(${CHANNEL}, ${origin} || ' ' || payload) FROM unnest(${payloads}::text[]) AS payload`.pipe(
        Effect.asVoid,
        Effect.catchCause((cause) => Effect.logWarning("Sending live output to the other processes failed", cause))
      )

  /** Calls `listener` with what the other processes broadcast, for the life of the scope. */
  const onBroadcast = (listener: BroadcastListener): Effect.Effect<void, never, Scope.Scope> =>
    Effect.acquireRelease(
      Effect.sync(() => broadcasts.add(listener)),
      () => Effect.sync(() => broadcasts.delete(listener))
    )

  /**
   * After the commit it is about, outside any transaction: tells the other processes' listeners of
   * `topic` (a word) these ids (none: a signal without ids). Best effort, as `broadcast`; sent
   * only while another process may be listening.
   */
  const signal = (topic: string, ids: ReadonlyArray<string>): Effect.Effect<void> => {
    if (!othersListening()) return Effect.void
    const payloads: Array<string> = []
    for (let start = 0; start === 0 || start < ids.length; start += IDS_PER_SIGNAL) {
      payloads.push([`${origin} ${SIGNAL}${topic}`, ...ids.slice(start, start + IDS_PER_SIGNAL)].join(" "))
    }
    return sql`SELECT pg_notify(${CHANNEL}, payload) FROM unnest(${payloads}::text[]) AS payload`.pipe(
      Effect.asVoid,
      Effect.catchCause((cause) => Effect.logWarning(`Signalling ${topic} to the other processes failed`, cause))
    )
  }

  /** Calls `listener` with the ids of every `topic` signal the other processes send, for the life of the scope. */
  const onSignal = (topic: string, listener: SignalListener): Effect.Effect<void, never, Scope.Scope> =>
    signals.register(topic, listener)

  return { wake, notice, lastKnown, nextWake, shared, othersListening, broadcast, onBroadcast, signal, onSignal } as const
})

export class EventNotifications extends Context.Service<EventNotifications, Effect.Success<typeof make>>()("EventNotifications") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(AgentsRepository.layer))
}
