/**
 * A lock file naming the pid of the process that holds it, kept by one process at a time: the
 * embedded database's DATA_DIR/pg.lock (layers/Database.ts) and the daemon's state file lock
 * (daemon/StateFile.ts).
 *
 * It is created exclusively with the pid in it. One that exists already is held when it names a
 * live process other than this one, names this process and this process holds it, or names no
 * pid yet and was created in the last seconds (another process between creating and writing it).
 * Any other is stale: a process gone (SIGKILL, a crash; a zombie counts as gone, ProcessLiveness.ts),
 * this pid without this process holding it (pid 1 again after a container restart), or a file left
 * empty; it is replaced, with a warning. The lock is removed when the scope closes, and only while
 * it still names this process.
 *
 * Taking a stale lock over. Two processes finding the same stale lock together must not both
 * replace it: the second would remove the lock the first has just made, and both would hold it.
 * So the lock is replaced only by the process that creates its takeover marker, FILE.takeover,
 * exclusively with its pid in it. Holding the marker, it reads the lock again and replaces it only
 * if it is still stale, then removes the marker. Every replacement happens under the marker, and
 * nothing else changes an existing lock but its own process removing it, so what was read under
 * the marker holds until the replacement. A process that finds the marker taken fails at once with
 * the lock in use by the marker's process, the one taking it over: waiting for it would only end
 * in the same answer, that process holding the lock.
 *
 * A marker can be stale too, left by a process that died taking the lock over. A takeover lasts
 * milliseconds, so a marker is one under way only while it is less than 5 s old and names no
 * process gone (nor this one: a takeover never outlives one synchronous call). A stale marker is
 * taken over the same way, under FILE.takeover.takeover, so two processes finding it together do
 * not both replace it either.
 *
 * What it does not cover: a process stopped in the middle of a takeover for more than 5 s (SIGSTOP,
 * a debugger) may find, once it goes on, its marker taken over by another, and then replace the
 * lock that other one has made. Nor a file system whose exclusive create is not atomic.
 */
import { Effect } from "effect"
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { isAlive } from "./ProcessLiveness.ts"

/** How long a lock file without a pid is taken for one another process is writing. */
const BEING_WRITTEN_MS = 5_000

/** How long a takeover marker is taken for a takeover under way (one lasts milliseconds). */
const TAKEOVER_MS = 5_000

/** The lock files this process holds: a lock naming our own pid is ours only if it is in here. */
const heldLocks = new Set<string>()

/** Whether a file naming `owner` (undefined: no pid in it) is held, not stale. */
type IsHeld = (file: string, owner: number | undefined) => boolean

/** What claiming a file came to: created, replaced when stale, or refused for the process holding it. */
type Claim =
  | { readonly _tag: "Created" }
  | { readonly _tag: "Replaced"; readonly staleOwner: number | undefined }
  | { readonly _tag: "InUse"; readonly owner: number | undefined }

const ownerOf = (file: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8").trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

const isYoungerThan = (file: string, ms: number): boolean => {
  const stats = statSync(file, { throwIfNoEntry: false })
  return stats !== undefined && Date.now() - stats.mtimeMs < ms
}

const isLockHeld: IsHeld = (lockFile, owner) =>
  owner === undefined
    ? isYoungerThan(lockFile, BEING_WRITTEN_MS)
    : owner === process.pid
    ? heldLocks.has(lockFile)
    : isAlive(owner)

const isTakeoverUnderWay: IsHeld = (marker, owner) =>
  isYoungerThan(marker, TAKEOVER_MS) && (owner === undefined || (owner !== process.pid && isAlive(owner)))

/** Creates the file holding this pid; false when it exists already. */
const create = (file: string): boolean => {
  try {
    writeFileSync(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
}

const removeIfOwn = (file: string) => {
  if (ownerOf(file) === process.pid) rmSync(file, { force: true })
}

/** Under the file's takeover marker: replaces the file if it is still stale. */
const replaceIfStale = (file: string, isHeld: IsHeld): Claim => {
  const owner = ownerOf(file)
  if (isHeld(file, owner)) return { _tag: "InUse", owner }
  rmSync(file, { force: true })
  // A process finding the file gone in between creates it first.
  return create(file) ? { _tag: "Replaced", staleOwner: owner } : { _tag: "InUse", owner: ownerOf(file) }
}

/** Creates `file` holding this pid or, when it is stale, replaces it under its takeover marker, claimed the same way. */
const claim = (file: string, isHeld: IsHeld): Claim => {
  if (create(file)) return { _tag: "Created" }
  const owner = ownerOf(file)
  if (isHeld(file, owner)) return { _tag: "InUse", owner }
  const marker = `${file}.takeover`
  const takeover = claim(marker, isTakeoverUnderWay)
  if (takeover._tag === "InUse") return takeover
  try {
    return replaceIfStale(file, isHeld)
  } finally {
    removeIfOwn(marker)
  }
}

/**
 * Holds `lockFile` for the life of the scope. Fails with `inUse(owner)` when another process
 * holds it or is taking it over (`owner` undefined while that process is writing it), with
 * `unusable(cause)` when the file cannot be read, written or removed.
 */
export const holdPidLockFile = <InUse, Unusable>(
  lockFile: string,
  errors: { readonly inUse: (owner: number | undefined) => InUse; readonly unusable: (cause: unknown) => Unusable }
) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const claimed = yield* Effect.try({
        try: () => {
          const claimed = claim(lockFile, isLockHeld)
          // Held from here on: another fiber of this process must not take it for a stale one.
          if (claimed._tag !== "InUse") heldLocks.add(lockFile)
          return claimed
        },
        catch: errors.unusable
      })
      if (claimed._tag === "InUse") return yield* Effect.fail(errors.inUse(claimed.owner))
      if (claimed._tag === "Replaced") {
        yield* Effect.logWarning(`Replaced the stale lock ${lockFile} of process ${claimed.staleOwner ?? "unknown"}`)
      }
    }),
    () =>
      Effect.sync(() => {
        heldLocks.delete(lockFile)
        removeIfOwn(lockFile)
      })
  )
