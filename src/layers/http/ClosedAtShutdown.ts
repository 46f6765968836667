/**
 * Shutdown's first step, before the listener drains: the connections that never end by
 * themselves are ended, or the drain would wait for them until its grace ran out. Every daemon
 * connected here is sent `close` `server_shutdown` (its socket closed, 1001) and its session
 * awaited (at most 10 s), so that it ends as a finished request, not interrupted by the listener's
 * close; every event stream gets `stream_closed` `server_shutdown`; both reconnect, to the next start or another process,
 * and miss nothing (a daemon sends its results again, a stream resumes after its Last-Event-ID).
 */
import { Effect, Layer } from "effect"
import { AgentEvents } from "../../services/runtime/AgentEvents.ts"
import { MachineSessions } from "../../services/machines/MachineSessions.ts"

/** Built after the listener, so released before it. */
export const LongLivedConnectionsClosedAtShutdown = Layer.effectDiscard(
  Effect.gen(function*() {
    const sessions = yield* MachineSessions
    const events = yield* AgentEvents
    yield* Effect.addFinalizer(() => Effect.andThen(sessions.closeAtShutdown, events.closeStreamsAtShutdown))
  })
)
