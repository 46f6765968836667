/**
 * The daemon's life: register (the same machine again when the state file names one), connect,
 * serve until the connection ends, and start over. Reconnects back off exponentially
 * (RECONNECT_BACKOFF) while attempts fail before the welcome, and start afresh after a
 * connection that was welcomed. Stops only on what retrying cannot fix: a refused registration
 * (bad or revoked token, invalid name), no protocol version in common, or another daemon that
 * connected as this machine (a copy of its state file; Connection.ts). Requests keep running
 * across reconnects; SIGTERM or SIGINT interrupts the daemon, which kills running commands.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Layer, Schedule } from "effect"
import { connect, ConnectionLost, DaemonStop } from "./Connection.ts"
import { Directories } from "./Directories.ts"
import { Outbox } from "./Outbox.ts"
import { registerMachine } from "./RegisterMachine.ts"
import { RequestLedger } from "./RequestLedger.ts"
import { RequestRunner } from "./RequestRunner.ts"
import { StateFile } from "./StateFile.ts"
import { CommandGroups } from "./tools/CommandGroups.ts"

/** 0.5 s, doubling, at most 30 s, jittered. */
export const RECONNECT_BACKOFF = Schedule.min([Schedule.exponential("500 millis"), Schedule.spaced("30 seconds")]).pipe(
  Schedule.jittered
)
const PAUSE_AFTER_WELCOMED = "1 second"

/** What operations run with (ToolServices): the machine's directories, the commands' watcher, Node's services. */
export const operationServicesLayer = (directories: ReadonlyArray<string>) =>
  Layer.merge(Directories.layer(directories), CommandGroups.layer).pipe(Layer.provideMerge(NodeServices.layer))

/** Request handling: the state file, the ledger, the runner, with what operations run with. */
export const requestHandlingLayer = (options: { readonly statePath: string; readonly server: string; readonly directories: ReadonlyArray<string> }) =>
  RequestRunner.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(
      RequestLedger.layer.pipe(Layer.provideMerge(StateFile.layer(options.statePath, options.server))),
      Outbox.layer,
      operationServicesLayer(options.directories)
    ))
  )

/** One registration and one connection; ends in ConnectionLost or DaemonStop. */
const cycle = Effect.gen(function*() {
  const stateFile = yield* StateFile
  const machine_id = yield* stateFile.machineId
  const registration = yield* registerMachine(machine_id).pipe(
    Effect.mapError((error) =>
      error.retryable
        ? new ConnectionLost({ message: error.message, welcomed: false })
        : new DaemonStop({ message: error.message })
    )
  )
  const registered = registration.machine.id
  if (registered !== machine_id) {
    yield* Effect.logInfo(`registered as a new machine ${registered}${machine_id === null ? "" : ` (${machine_id} is gone)`}`)
    // Results of another machine's requests have nowhere to go: a new machine starts with an empty ledger.
    yield* stateFile.registered(registered)
  }
  return yield* connect(registration)
})

export const runDaemon = cycle.pipe(
  Effect.tapError((error) =>
    error._tag !== "ConnectionLost"
      ? Effect.void
      : error.serverStopping
      ? Effect.logInfo(`${error.message}; reconnecting`)
      : Effect.logWarning(`${error.message}; reconnecting`)
  ),
  Effect.retry({ schedule: RECONNECT_BACKOFF, while: (error) => error._tag === "ConnectionLost" && !error.welcomed }),
  Effect.catchTag("ConnectionLost", () => Effect.sleep(PAUSE_AFTER_WELCOMED)),
  Effect.forever
)
