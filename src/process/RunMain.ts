/**
 * How every entry point (the server, the daemon, the demo model, the admin command line) runs its
 * program: `NodeRuntime.runMain`, with one thing more. Ctrl-C reaches a process started by npm
 * twice: the terminal signals the whole process group, npm included, and npm forwards the signal
 * to its child. `runMain` starts the shutdown at the first SIGINT or SIGTERM (Effect 3's removed
 * its handler then, so the second, a moment later, met Node's default action and killed the
 * process in the middle of its shutdown: no drain, no "stopped", the data directory's lock left
 * behind; Effect 4's keeps it, and interrupts again, which changes nothing). A handler
 * of our own stays for the life of the process: a repeat within ECHO_WINDOW_MS of the first signal
 * is that echo and changes nothing; a later one means the caller insists, and the process exits at
 * once, as it would have with no handler (so does a signal that no other handler is there to act on).
 *
 * The exit code is Effect 3's: 0 when the program ends or is interrupted (a signal: the normal
 * stop), 1 when it fails. Effect 4's `runMain` exits 130 on an interruption.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, type Effect, Exit, type Runtime } from "effect"
import { constants } from "node:os"

const ECHO_WINDOW_MS = 1_000

/** Installed before runMain's own handler, so that it runs first. */
const tolerateEchoedSignals = (): void => {
  let firstAt: number | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    const handledElsewhere = process.listenerCount(signal) > 1
    if (firstAt === undefined && handledElsewhere) {
      firstAt = Date.now()
      return
    }
    if (firstAt !== undefined && Date.now() - firstAt < ECHO_WINDOW_MS) return
    if (firstAt !== undefined) process.stderr.write(`${signal} again: exiting before the shutdown has finished\n`)
    process.exit(128 + constants.signals[signal])
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
}

const teardown: Runtime.Teardown = (exit, onExit) =>
  onExit(Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause) ? 1 : 0)

export const runMain = (options: { readonly disableErrorReporting?: boolean }) =>
<E, A>(effect: Effect.Effect<A, E>): void => {
  tolerateEchoedSignals()
  NodeRuntime.runMain({ ...options, teardown })(effect)
}
