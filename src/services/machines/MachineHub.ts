/**
 * This process's machine connections (docs/machines.md): which machines have their daemon
 * connected here, so that a change (a deleted machine, a revoked token, a new request or cancel)
 * reaches the socket at once. A change made here is also signalled to the other processes
 * (EventNotifications, Postgres only), for the connections they hold; as a safety net, each
 * connection still looks at its machine's mailbox every POLL interval and checks its machine and
 * credential on every heartbeat.
 */
import { Context, Effect, Layer, PubSub, type Scope } from "effect"
import type { CloseReason } from "../../domain/machines/DaemonProtocol.ts"
import type { MachineId, MachinePoolId } from "../../domain/shared/Ids.ts"
import { EventNotifications } from "../runtime/EventNotifications.ts"

/** The signals between processes (EventNotifications.signal): their topics. */
const CHANGED = "machines-changed"
const DELETED = "machines-deleted"
const REVOKED = "credentials-revoked"

export interface LocalConnection {
  readonly machineId: MachineId
  readonly connectionId: string
  readonly credentialId: string
  /** Sends `close` with the reason and closes the socket. */
  readonly close: (reason: CloseReason, message: string) => Effect.Effect<void>
  /** Completes once its session has ended: its socket closed and its machine marked disconnected. */
  readonly ended: Effect.Effect<void>
}

/** How long `closeAll` waits for the closed sessions to end before it leaves them to the drain. */
const SESSIONS_END_WITHIN = "10 seconds"

const make = Effect.gen(function*() {
  const notifications = yield* EventNotifications
  const connections = new Map<string, LocalConnection>()
  /**
   * Machines whose mailbox changed, and pools with requests waiting for one of their machines
   * (PoolScheduler listens for those).
   */
  const changed = yield* PubSub.sliding<string>(1024)

  /** Set by `closeAll`: the process is stopping, and takes no connection more. */
  let closingAll = false

  /** Adds a connection, replacing the machine's earlier one; false when the process is stopping (the caller closes it). */
  const add = (connection: LocalConnection): Effect.Effect<boolean> =>
    Effect.suspend(() => {
      if (closingAll) return Effect.succeed(false)
      const previous = connections.get(connection.machineId)
      connections.set(connection.machineId, connection)
      return previous === undefined
        ? Effect.succeed(true)
        : Effect.as(previous.close("superseded", "another connection of this machine replaced this one"), true)
    })

  const remove = (connection: LocalConnection) =>
    Effect.sync(() => {
      if (connections.get(connection.machineId) === connection) connections.delete(connection.machineId)
    })

  /** Closes the deleted machine's connection when it is on this process. */
  const closeDeletedHere = (machineId: string) =>
    Effect.suspend(() => {
      const connection = connections.get(machineId)
      return connection === undefined ? Effect.void : connection.close("machine_deleted", `machine ${machineId} was deleted`)
    })

  const closeCredentialHere = (credentialId: string) =>
    Effect.forEach(
      [...connections.values()].filter((connection) => connection.credentialId === credentialId),
      (connection) => connection.close("revoked", `the daemon token ${credentialId} was revoked`),
      { discard: true }
    )

  /** After the commit that deleted the machine: its connection, wherever it is, is closed. */
  const machineDeleted = (machineId: MachineId) =>
    Effect.andThen(
      closeDeletedHere(machineId),
      connections.has(machineId) ? Effect.void : notifications.signal(DELETED, [machineId])
    )

  /** After the commit that revoked the daemon token: its connections, wherever they are, are closed. */
  const credentialRevoked = (credentialId: string) =>
    Effect.andThen(closeCredentialHere(credentialId), notifications.signal(REVOKED, [credentialId]))

  /**
   * Closes every connection of this process (it is stopping) and waits for their sessions to end,
   * so that each ends as a finished request rather than being interrupted when the listener
   * closes; a connection added later is refused (`add`).
   */
  const closeAll = (reason: CloseReason, message: string) =>
    Effect.suspend(() => {
      closingAll = true
      const closing = [...connections.values()]
      return Effect.forEach(closing, (connection) => connection.close(reason, message), { discard: true }).pipe(
        Effect.andThen(Effect.forEach(closing, (connection) => connection.ended, { concurrency: "unbounded", discard: true })),
        Effect.timeoutOption(SESSIONS_END_WITHIN),
        Effect.asVoid
      )
    })

  const wakeHere = (machineIds: ReadonlyArray<string>) => Effect.asVoid(PubSub.publishAll(changed, machineIds))

  /**
   * After a commit that added requests or cancels for these machines or pools: their connections
   * here are woken, and the other processes are told of the machines not connected here.
   */
  const wake = (machineIds: Iterable<MachineId | MachinePoolId>) =>
    Effect.suspend(() => {
      const ids = [...machineIds]
      const elsewhere = ids.filter((id) => !connections.has(id))
      return Effect.andThen(wakeHere(ids), elsewhere.length === 0 ? Effect.void : notifications.signal(CHANGED, elsewhere))
    })

  // What the other processes signal, for the connections here.
  yield* notifications.onSignal(CHANGED, wakeHere)
  yield* notifications.onSignal(DELETED, (ids) =>
    Effect.forEach(ids, closeDeletedHere, { discard: true }))
  yield* notifications.onSignal(REVOKED, (ids) => Effect.forEach(ids, closeCredentialHere, { discard: true }))

  const subscribe: Effect.Effect<PubSub.Subscription<string>, never, Scope.Scope> = PubSub.subscribe(changed)

  return { add, remove, machineDeleted, credentialRevoked, closeAll, wake, subscribe } as const
})

export class MachineHub extends Context.Service<MachineHub, Effect.Success<typeof make>>()("MachineHub") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(EventNotifications.layer))
}
