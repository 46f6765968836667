/**
 * What a daemon keeps across restarts, in one JSON file (mode 0600, replaced atomically on every
 * change): the server it belongs to, the `machine_id` of its last registration (so a restart
 * registers the same machine), and the request ledger (RequestLedger.ts). The file is held by
 * one daemon at a time, through a lock file beside it naming the holder's pid.
 *
 * Default place: `<config dir>/agent-platform/daemon/<server host>_<port>.json`, where the
 * config dir is $XDG_CONFIG_HOME or ~/.config (~/Library/Application Support on macOS,
 * %APPDATA% on Windows).
 */
import { Context, Effect, Layer, Ref, Schema, Semaphore } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import { homedir } from "node:os"
import * as nodePath from "node:path"
import { Outcome, RequestId } from "../domain/machines/DaemonProtocol.ts"
import { MachineId } from "../domain/shared/Ids.ts"
import { isAlive } from "../layers/ProcessLiveness.ts"

export const LedgerEntry = Schema.Union([
  Schema.Struct({ state: Schema.Literal("running"), at: Schema.Number }),
  Schema.Struct({ state: Schema.Literal("done"), at: Schema.Number, outcome: Outcome }),
  Schema.Struct({ state: Schema.Literal("acknowledged"), at: Schema.Number })
])
export type LedgerEntry = typeof LedgerEntry.Type

export const DaemonState = Schema.Struct({
  version: Schema.Literal(1),
  server: Schema.String,
  machine_id: Schema.NullOr(MachineId),
  /** By request id; `at` is when the entry last changed (ms since the epoch). */
  requests: Schema.Record(RequestId, LedgerEntry)
})
export type DaemonState = typeof DaemonState.Type

const StateJson = Schema.fromJsonString(DaemonState)

export class StateFileError extends Schema.TaggedError<StateFileError>()("StateFileError", { message: Schema.String }) {}

export class StateFile extends Context.Service<StateFile, {
  readonly path: string
  readonly get: Effect.Effect<DaemonState>
  /** Changes the state and writes it before returning (a change that returns the same state writes nothing); changes run one at a time. */
  readonly modify: <A>(change: (state: DaemonState) => readonly [A, DaemonState]) => Effect.Effect<A>
  /**
   * Changes the state without writing it: it is written with the next change `modify` writes, or
   * when the daemon stops. For a change that a crash may lose because it is made again after the
   * restart (an acknowledgement, RequestLedger).
   */
  readonly modifyUnwritten: <A>(change: (state: DaemonState) => readonly [A, DaemonState]) => Effect.Effect<A>
}>()("daemon/StateFile") {
  static readonly layer = (path: string, server: string) => Layer.effect(StateFile, open(path, server))
}

export const defaultStatePath = (server: URL): string => {
  const configDir = process.env.XDG_CONFIG_HOME ??
    (process.platform === "darwin"
      ? nodePath.join(homedir(), "Library", "Application Support")
      : process.platform === "win32"
      ? process.env.APPDATA ?? nodePath.join(homedir(), "AppData", "Roaming")
      : nodePath.join(homedir(), ".config"))
  const port = server.port === "" ? (server.protocol === "https:" ? "443" : "80") : server.port
  return nodePath.join(configDir, "agent-platform", "daemon", `${server.hostname.replace(/[^A-Za-z0-9.-]/g, "_")}_${port}.json`)
}

const failure = (message: string) => (cause: unknown) =>
  new StateFileError({ message: `${message}: ${cause instanceof Error ? cause.message : String(cause)}` })

/** Takes the lock file, or fails when a live daemon holds it; a stale lock (its process gone) is taken over. */
const lock = (path: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const lockPath = `${path}.lock`
        for (;;) {
          try {
            await fs.writeFile(lockPath, String(process.pid), { flag: "wx", mode: 0o600 })
            return lockPath
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
            const holder = Number(await fs.readFile(lockPath, "utf8").catch(() => ""))
            if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
              throw new Error(`another daemon (pid ${holder}) uses it; stop it or give this one another --state file`)
            }
            await fs.rm(lockPath, { force: true })
          }
        }
      },
      catch: failure(`The state file ${path} cannot be used`)
    }),
    (lockPath) => Effect.promise(() => fs.rm(lockPath, { force: true }))
  )

const load = (path: string, server: string) =>
  Effect.tryPromise({
    try: () => fs.readFile(path, "utf8").catch((error) => (error.code === "ENOENT" ? undefined : Promise.reject(error))),
    catch: failure(`The state file ${path} cannot be read`)
  }).pipe(
    Effect.flatMap((text) =>
      text === undefined
        ? Effect.succeed<DaemonState>({ version: 1, server, machine_id: null, requests: {} })
        : Schema.decodeEffect(StateJson)(text).pipe(
          Effect.mapError(failure(`The state file ${path} is damaged; move it away to start afresh (the machine will register anew)`))
        )
    ),
    Effect.filterOrFail(
      (state) => state.server === server,
      (state) => new StateFileError({ message: `The state file ${path} belongs to the server ${state.server}; give another --state file` })
    )
  )

const write = async (path: string, state: DaemonState) => {
  // The state is its own encoded form: no field is transformed (this assignment stops compiling if
  // one ever is). So it is written without the schema's walk over every ledger entry, which was
  // most of a write's cost with a full ledger (docs/daemon-protocol.md, "The state file").
  const encoded: typeof DaemonState.Encoded = state
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`
  await fs.writeFile(temporary, JSON.stringify(encoded), { mode: 0o600 })
  await fs.rename(temporary, path)
}

const save = (path: string, state: DaemonState) => Effect.promise(() => write(path, state))

const open = (path: string, server: string) =>
  Effect.gen(function*() {
    yield* Effect.tryPromise({
      try: () => fs.mkdir(nodePath.dirname(path), { recursive: true, mode: 0o700 }),
      catch: failure(`The directory of the state file ${path} cannot be made`)
    })
    yield* lock(path)
    const initial = yield* load(path, server)
    // Written at once: a file that cannot be written stops the daemon now, not at its first request.
    yield* Effect.tryPromise({ try: () => write(path, initial), catch: failure(`The state file ${path} cannot be written`) })
    const ref = yield* Ref.make(initial)
    const semaphore = yield* Semaphore.make(1)
    // Whether the state holds changes not written yet (modifyUnwritten).
    let unwritten = false
    const changeWith = (written: boolean) => <A>(change: (state: DaemonState) => readonly [A, DaemonState]) =>
      semaphore.withPermits(1)(Effect.gen(function*() {
        const current = yield* Ref.get(ref)
        const [result, next] = change(current)
        if (next !== current) {
          if (written) yield* save(path, next)
          unwritten = !written
          yield* Ref.set(ref, next)
        }
        return result
      }))
    // Before the lock file goes (finalizers run last first): a write that fails then loses only
    // changes that are made again.
    yield* Effect.addFinalizer(() =>
      semaphore.withPermits(1)(
        Effect.suspend(() => unwritten ? Effect.exit(Effect.flatMap(Ref.get(ref), (state) => save(path, state))) : Effect.void)
      )
    )
    return { path, get: Ref.get(ref), modify: changeWith(true), modifyUnwritten: changeWith(false) }
  })
