/**
 * This process's machine connections (docs/machines.md): which machines have their daemon
 * connected here, so that a change made here (a deleted machine, a revoked token, a new request
 * or cancel) reaches the socket at once. Other processes find out on their own: each connection
 * looks at its machine's mailbox every POLL interval and checks its machine and credential on
 * every heartbeat.
 */
import { Context, Effect, Layer, PubSub, type Scope } from "effect"
import type { CloseReason } from "../../domain/machines/DaemonProtocol.ts"
import type { MachineId, MachinePoolId } from "../../domain/shared/Ids.ts"

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
  const connections = new Map<string, LocalConnection>()
  /**
   * Machines whose mailbox changed (an empty string: every machine), and pools with requests
   * waiting for one of their machines (PoolScheduler listens for those).
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

  const closeMachine = (machineId: MachineId, reason: CloseReason, message: string) =>
    Effect.suspend(() => {
      const connection = connections.get(machineId)
      return connection === undefined ? Effect.void : connection.close(reason, message)
    })

  const closeCredential = (credentialId: string, reason: CloseReason, message: string) =>
    Effect.forEach(
      [...connections.values()].filter((connection) => connection.credentialId === credentialId),
      (connection) => connection.close(reason, message),
      { discard: true }
    )

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

  /** After a commit that added requests or cancels for these machines or pools (none: any machine). */
  const wake = (machineIds?: Iterable<MachineId | MachinePoolId>) =>
    Effect.asVoid(machineIds === undefined ? PubSub.publish(changed, "") : PubSub.publishAll(changed, machineIds))

  const subscribe: Effect.Effect<PubSub.Subscription<string>, never, Scope.Scope> = PubSub.subscribe(changed)

  return { add, remove, closeMachine, closeCredential, closeAll, wake, subscribe } as const
})

export class MachineHub extends Context.Service<MachineHub, Effect.Success<typeof make>>()("MachineHub") {
  static readonly layer = Layer.effect(this, make)
}
