/**
 * Where a finished request's result goes: the current connection, when there is one. A result
 * that finds no connection is not lost: it stays in the ledger and is re-sent after the next
 * hello.
 */
import { Context, Effect, Layer, Option, Ref } from "effect"
import type { DaemonMessage } from "../domain/machines/DaemonProtocol.ts"

export type Send = (message: DaemonMessage) => Effect.Effect<void>

export class Outbox extends Context.Service<Outbox, {
  /** From now on, messages go through `send` (a connection was welcomed). */
  readonly attach: (send: Send) => Effect.Effect<void>
  readonly detach: Effect.Effect<void>
  readonly send: Send
}>()("daemon/Outbox") {
  static readonly layer = Layer.effect(Outbox, Effect.gen(function*() {
    const current = yield* Ref.make(Option.none<Send>())
    return {
      attach: (send) => Ref.set(current, Option.some(send)),
      detach: Ref.set(current, Option.none()),
      send: (message) =>
        Effect.flatMap(Ref.get(current), Option.match({ onNone: () => Effect.void, onSome: (send) => send(message) }))
    }
  }))
}
