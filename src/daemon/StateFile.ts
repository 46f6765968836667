/**
 * What a daemon keeps across restarts: the server it belongs to, the `machine_id` of its last
 * registration (so a restart registers the same machine), and the request ledger
 * (RequestLedger.ts), by request id. It is held by one daemon at a time, through a lock file
 * beside it naming the holder's pid. Two files, mode 0600:
 *
 * - the snapshot, `FILE` (JSON, replaced atomically): `{version, server, machine_id, journal,
 *   requests}`, `journal` naming the journal that continues it;
 * - the journal, `FILE.journal`: the ledger's changes since the snapshot, appended. Its first
 *   line names it (`{"journal": id}`); each further line is one change, a JSON array of
 *   `[request id, entry]` pairs, an entry `null` when the id is forgotten.
 *
 * A change appends a line, however full the ledger: the snapshot is written again only when the
 * journal has grown past it (or MIN_JOURNAL_BYTES), so that rewriting the whole ledger is paid
 * once for as many bytes of changes. Loading replays the journal over the snapshot when it names
 * the snapshot's journal: a daemon stopped after a new snapshot's rename and before its new
 * journal began leaves an old journal, which the new snapshot already holds and which is ignored.
 * A last line without its newline is a write the daemon did not finish (it never went on after it)
 * and is ignored too. The files survive the daemon's crash; they are not fsynced, so a power loss
 * may lose the last changes.
 *
 * Default place: `<config dir>/agent-platform/daemon/<server host>_<port>.json`, where the
 * config dir is $XDG_CONFIG_HOME or ~/.config (~/Library/Application Support on macOS,
 * %APPDATA% on Windows).
 */
import { Context, Effect, Layer, Schema, Semaphore } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import { homedir } from "node:os"
import * as nodePath from "node:path"
import { Outcome, RequestId } from "../domain/machines/DaemonProtocol.ts"
import { MachineId } from "../domain/shared/Ids.ts"
import { holdPidLockFile } from "../process/PidLockFile.ts"

export const LedgerEntry = Schema.Union([
  Schema.Struct({ state: Schema.Literal("running"), at: Schema.Number }),
  Schema.Struct({ state: Schema.Literal("done"), at: Schema.Number, outcome: Outcome }),
  Schema.Struct({ state: Schema.Literal("acknowledged"), at: Schema.Number })
])
export type LedgerEntry = typeof LedgerEntry.Type

/** The snapshot file. */
const DaemonState = Schema.Struct({
  version: Schema.Literal(1),
  server: Schema.String,
  machine_id: Schema.NullOr(MachineId),
  /** The id of the journal that continues this snapshot; absent in a file written before journals. */
  journal: Schema.optionalKey(Schema.String),
  /** By request id; `at` is when the entry last changed (ms since the epoch). */
  requests: Schema.Record(RequestId, LedgerEntry)
})

/** A change to the ledger: the request id's new entry, or `null` when the id is forgotten. */
export const LedgerChange = Schema.Tuple([RequestId, Schema.NullOr(LedgerEntry)])
export type LedgerChange = typeof LedgerChange.Type

const StateJson = Schema.fromJsonString(DaemonState)
const JournalHeader = Schema.fromJsonString(Schema.Struct({ journal: Schema.String }))
const JournalLine = Schema.fromJsonString(Schema.Array(LedgerChange))

/** The journal may grow to the snapshot's size, and to this much at least, before the snapshot is written again. */
export const MIN_JOURNAL_BYTES = 256 * 1024

export class StateFileError extends Schema.TaggedError<StateFileError>()("StateFileError", { message: Schema.String }) {}

export class StateFile extends Context.Service<StateFile, {
  /** The machine of the last registration, if any. */
  readonly machineId: Effect.Effect<MachineId | null>
  /** The ledger as it is now (changed only through `change` and `changeUnwritten`). */
  readonly requests: Effect.Effect<ReadonlyMap<RequestId, LedgerEntry>>
  /** A new machine registered: its id, with an empty ledger; written before returning. */
  readonly registered: (machineId: MachineId) => Effect.Effect<void>
  /**
   * Decides changes to the ledger from it as it is, and makes them, written before returning
   * (no change, nothing written); decisions run one at a time.
   */
  readonly change: <A>(decide: (requests: ReadonlyMap<RequestId, LedgerEntry>) => readonly [A, ReadonlyArray<LedgerChange>]) => Effect.Effect<A>
  /**
   * The same, without writing the changes: they are written with the next change `change`
   * writes, or when the daemon stops. For changes that a crash may lose because they are made
   * again after the restart (an acknowledgement, RequestLedger).
   */
  readonly changeUnwritten: <A>(decide: (requests: ReadonlyMap<RequestId, LedgerEntry>) => readonly [A, ReadonlyArray<LedgerChange>]) => Effect.Effect<A>
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

const journalPathOf = (path: string) => `${path}.journal`

const failure = (message: string) => (cause: unknown) =>
  new StateFileError({ message: `${message}: ${cause instanceof Error ? cause.message : String(cause)}` })

/** Holds the lock file `FILE.lock` (process/PidLockFile.ts), or fails when another daemon holds it. */
const lock = (path: string) =>
  holdPidLockFile(`${path}.lock`, {
    inUse: (owner) =>
      new StateFileError({
        message: `The state file ${path} cannot be used: another daemon ${owner === undefined ? "is starting on it" : `(pid ${owner}) uses it`}; ` +
          `stop it or give this one another --state file`
      }),
    unusable: failure(`The state file ${path} cannot be used`)
  })

/** A file's text, or undefined when there is none. */
const readIfPresent = (path: string) =>
  fs.readFile(path, "utf8").catch((error) => (error.code === "ENOENT" ? undefined : Promise.reject(error)))

/** The changes of a journal that continues the snapshot `journal`, in order: none for another snapshot's journal. */
const journalChanges = (text: string, journal: string | undefined) =>
  Effect.gen(function*() {
    // The text after the last newline is a line whose write did not finish.
    const lines = text.split("\n").slice(0, -1)
    if (lines.length === 0 || journal === undefined) return []
    const header = yield* Schema.decodeEffect(JournalHeader)(lines[0])
    if (header.journal !== journal) return []
    const changes: Array<LedgerChange> = []
    for (const line of lines.slice(1)) changes.push(...yield* Schema.decodeEffect(JournalLine)(line))
    return changes
  })

const applyChange = (requests: Map<RequestId, LedgerEntry>, [id, entry]: LedgerChange) => {
  if (entry === null) requests.delete(id)
  else requests.set(id, entry)
}

/**
 * The state the daemon left for `server` at `path`: the snapshot with its journal replayed
 * (a new machine's empty state when there is no snapshot). Fails when a file is damaged or the
 * snapshot belongs to another server.
 */
export const loadState = (path: string, server: string) =>
  Effect.gen(function*() {
    const [snapshotText, journalText] = yield* Effect.tryPromise({
      try: () => Promise.all([readIfPresent(path), readIfPresent(journalPathOf(path))]),
      catch: failure(`The state file ${path} cannot be read`)
    })
    const damaged = failure(`The state file ${path} is damaged; move it and ${journalPathOf(path)} away to start afresh (the machine will register anew)`)
    const requests = new Map<RequestId, LedgerEntry>()
    if (snapshotText === undefined) return { machineId: null as MachineId | null, requests }
    const snapshot = yield* Schema.decodeEffect(StateJson)(snapshotText).pipe(Effect.mapError(damaged))
    if (snapshot.server !== server) {
      return yield* Effect.fail(new StateFileError({ message: `The state file ${path} belongs to the server ${snapshot.server}; give another --state file` }))
    }
    for (const [id, entry] of Object.entries(snapshot.requests)) requests.set(id, entry)
    if (journalText !== undefined) {
      const changes = yield* journalChanges(journalText, snapshot.journal).pipe(Effect.mapError(damaged))
      for (const change of changes) applyChange(requests, change)
    }
    return { machineId: snapshot.machine_id, requests }
  })

/** The machine and the ledger in memory: the files hold them, but for the changes not written yet. */
type State = { machineId: MachineId | null; readonly requests: Map<RequestId, LedgerEntry> }

const makeDirectoryOf = (path: string) =>
  Effect.tryPromise({
    try: () => fs.mkdir(nodePath.dirname(path), { recursive: true, mode: 0o700 }),
    catch: failure(`The directory of the state file ${path} cannot be made`)
  })

/** The journal, open for appending until the scope closes. */
const openJournal = (journalPath: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({ try: () => fs.open(journalPath, "a", 0o600), catch: failure(`The state file ${journalPath} cannot be opened`) }),
    (handle) => Effect.promise(() => handle.close())
  )

/** Writes `state` to the files: a snapshot, or the changes made since as a journal line; one write at a time. */
const stateWriter = (path: string, server: string, journal: fs.FileHandle, state: State) => {
  /** The journal's size; the snapshot's size when it was last written. */
  let journalBytes = 0
  let snapshotBytes = 0
  /** Changes made and not written yet (changeUnwritten). */
  let unwritten: Array<LedgerChange> = []

  /** The state as a new snapshot continued by a new, empty journal. */
  const writeSnapshot = async () => {
    const id = randomBytes(9).toString("base64url")
    // The state is its own encoded form: no field is transformed (this assignment stops compiling if
    // one ever is). So it is written without the schema's walk over every ledger entry.
    const snapshot: typeof DaemonState.Encoded = {
      version: 1,
      server,
      machine_id: state.machineId,
      journal: id,
      requests: Object.fromEntries(state.requests)
    }
    const text = JSON.stringify(snapshot)
    const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`
    await fs.writeFile(temporary, text, { mode: 0o600 })
    await fs.rename(temporary, path)
    const header = `${JSON.stringify({ journal: id })}\n`
    await journal.truncate(0)
    await journal.appendFile(header)
    snapshotBytes = Buffer.byteLength(text)
    journalBytes = Buffer.byteLength(header)
    unwritten = []
  }

  /** Appends the changes not written yet as one line, or writes a snapshot instead once the journal has grown past it. */
  const writeChanges = async () => {
    if (unwritten.length === 0) return
    const line = `${JSON.stringify(unwritten)}\n`
    const bytes = Buffer.byteLength(line)
    if (journalBytes + bytes > Math.max(snapshotBytes, MIN_JOURNAL_BYTES)) return writeSnapshot()
    await journal.appendFile(line)
    journalBytes += bytes
    unwritten = []
  }

  /** A change already applied to the state, written with the next `writeChanges`. */
  const addUnwritten = (change: LedgerChange) => void unwritten.push(change)

  return { writeSnapshot, writeChanges, addUnwritten }
}

const open = (path: string, server: string) =>
  Effect.gen(function*() {
    yield* makeDirectoryOf(path)
    yield* lock(path)
    const state: State = yield* loadState(path, server)
    const journal = yield* openJournal(journalPathOf(path))
    const writer = stateWriter(path, server, journal, state)

    // Written at once: a file that cannot be written stops the daemon now, not at its first request.
    yield* Effect.tryPromise({ try: writer.writeSnapshot, catch: failure(`The state file ${path} cannot be written`) })
    const semaphore = yield* Semaphore.make(1)
    const one = semaphore.withPermits(1)

    const changeWith = (written: boolean) =>
    <A>(decide: (requests: ReadonlyMap<RequestId, LedgerEntry>) => readonly [A, ReadonlyArray<LedgerChange>]) =>
      one(Effect.suspend(() => {
        const [result, changes] = decide(state.requests)
        if (changes.length === 0) return Effect.succeed(result)
        for (const change of changes) {
          applyChange(state.requests, change)
          writer.addUnwritten(change)
        }
        return written ? Effect.as(Effect.promise(writer.writeChanges), result) : Effect.succeed(result)
      }))

    // Before the journal closes and the lock file goes (finalizers run last first): a write that
    // fails then loses only changes that are made again.
    yield* Effect.addFinalizer(() => one(Effect.exit(Effect.promise(writer.writeChanges))))

    return {
      machineId: Effect.sync(() => state.machineId),
      requests: Effect.succeed<ReadonlyMap<RequestId, LedgerEntry>>(state.requests),
      registered: (id: MachineId) =>
        one(Effect.promise(() => {
          state.machineId = id
          state.requests.clear()
          return writer.writeSnapshot()
        })),
      change: changeWith(true),
      changeUnwritten: changeWith(false)
    }
  })
