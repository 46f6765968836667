/**
 * Live output of model calls (docs/agents-api.md, "Live output"): the text and reasoning-summary
 * deltas of the step a turn is running, for the events streams of its agent. Nothing is stored.
 *
 * - This process: each delta is handed at once to the listeners of its agent, the streams of
 *   that agent that are open (a delta nobody watches costs a map lookup).
 * - Other processes (Postgres, while another may be listening: a process alone on its database
 *   sends none): the deltas of every model call of this process gathered over
 *   FLUSH_INTERVAL (from the first one waiting) go out together through
 *   EventNotifications.broadcast: one statement per interval for the whole process, none per
 *   delta, neither a statement nor a wake-up while nothing streams; consecutive deltas of one
 *   step and kind joined, cut into pieces of at most MAX_PIECE characters so that each
 *   notification stays under Postgres' 8000 bytes. A call that ends sends what is left
 *   before its step is recorded. Sends take turns (one at a time), so the pieces of a step arrive
 *   in order. What other processes broadcast is decoded and published here as it is heard,
 *   before the wake-up of the append that stores the step's output, which follows it.
 */
import { Context, Duration, Effect, Latch, Layer, Option, Schema, type Scope, Semaphore } from "effect"
import { encodeOutputDelta, OutputDelta, type OutputDeltaKind } from "../../domain/runtime/OutputDeltas.ts"
import type { AgentId, TurnId } from "../../domain/shared/Ids.ts"
import { KeyedCallbacks } from "../shared/KeyedCallbacks.ts"
import { EventNotifications } from "./EventNotifications.ts"

const FLUSH_INTERVAL = Duration.millis(50)

/** Characters per notification: at most 6 bytes each in JSON, so a piece and its fields stay under 8000 bytes. */
const MAX_PIECE = 1000

const decode = Schema.decodeUnknownOption(Schema.fromJsonString(OutputDelta))

const sameSource = (a: OutputDelta, b: OutputDelta) =>
  a.agent_id === b.agent_id && a.turn_id === b.turn_id && a.step === b.step && a.kind === b.kind

/**
 * Consecutive deltas of one step and kind joined (at the first one's offset), then cut into
 * pieces of at most MAX_PIECE code points, each at its own offset.
 */
const payloadsOf = (deltas: ReadonlyArray<OutputDelta>): ReadonlyArray<string> => {
  const joined: Array<OutputDelta> = []
  for (const delta of deltas) {
    const last = joined[joined.length - 1]
    if (last !== undefined && sameSource(last, delta)) joined[joined.length - 1] = { ...last, delta: last.delta + delta.delta }
    else joined.push(delta)
  }
  return joined.flatMap((delta) => {
    const codePoints = Array.from(delta.delta)
    const payloads: Array<string> = []
    for (let start = 0; start < codePoints.length; start += MAX_PIECE) {
      payloads.push(encodeOutputDelta({ ...delta, offset: delta.offset + start, delta: codePoints.slice(start, start + MAX_PIECE).join("") }))
    }
    return payloads
  })
}

/** The length of `text` in Unicode code points (a string iterates by code points). */
const codePointLength = (text: string) => {
  let length = 0
  for (const _ of text) length++
  return length
}

/** Sends one delta of the step an emitter belongs to, synchronously (it is called in a model call's reading). */
export type EmitDelta = (kind: OutputDeltaKind, text: string) => void

/** Called with each delta of an agent, synchronously: it must not block (a stream buffers or drops it). */
export type DeltaListener = (delta: OutputDelta) => void

const make = Effect.gen(function*() {
  const notifications = yield* EventNotifications
  /** The listeners of the agents with open streams. */
  const listeners = new KeyedCallbacks<AgentId, DeltaListener>()

  const publish = (delta: OutputDelta) => {
    const agentListeners = listeners.of(delta.agent_id)
    if (agentListeners !== undefined) for (const listener of agentListeners) listener(delta)
  }

  /** Deltas not yet sent to the other processes (Postgres only). */
  let pending: Array<OutputDelta> = []
  /** Open while deltas wait to be sent: the sending loop waits on it, so an idle process does not wake every interval. */
  const waiting = yield* Latch.make(false)
  const sending = yield* Semaphore.make(1)
  const flush = sending.withPermits(1)(Effect.suspend(() => {
    const batch = pending
    pending = []
    waiting.closeUnsafe()
    return notifications.broadcast(payloadsOf(batch))
  }))

  if (notifications.shared) {
    yield* Effect.forkScoped(Effect.forever(waiting.await.pipe(Effect.andThen(Effect.sleep(FLUSH_INTERVAL)), Effect.andThen(flush))))
    yield* notifications.onBroadcast((payload) => {
      const delta = decode(payload)
      if (Option.isSome(delta)) publish(delta.value)
    })
  }

  /** The emitter of one model call, for the life of the scope (which sends what is left when it closes). */
  const emitter = (agentId: AgentId, turnId: TurnId, step: number): Effect.Effect<EmitDelta, never, Scope.Scope> =>
    Effect.gen(function*() {
      if (notifications.shared) yield* Effect.addFinalizer(() => flush)
      /** Where the next delta of each kind starts, in code points. */
      const offsets: Record<OutputDeltaKind, number> = { text: 0, reasoning_summary: 0 }
      const emit: EmitDelta = (kind, text) => {
        if (text === "") return
        const delta: OutputDelta = { agent_id: agentId, turn_id: turnId, step, kind, offset: offsets[kind], delta: text }
        offsets[kind] += codePointLength(text)
        if (notifications.othersListening()) {
          pending.push(delta)
          waiting.openUnsafe()
        }
        publish(delta)
      }
      return emit
    })

  /** Hands the live output of `agentId` to `listener` from now on, as long as the scope lasts. */
  const subscribe = (agentId: AgentId, listener: DeltaListener): Effect.Effect<void, never, Scope.Scope> =>
    listeners.register(agentId, listener)

  return { emitter, subscribe } as const
})

export class LiveOutput extends Context.Service<LiveOutput, Effect.Success<typeof make>>()("LiveOutput") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(EventNotifications.layer))
}
