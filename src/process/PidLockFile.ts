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
 * empty; it is replaced, with a warning, once; another process winning that race is reported as
 * the owner. The lock is removed when the scope closes, and only while it still names this process.
 *
 * What it does not cover: two processes finding the same stale lock together may both remove it,
 * the second removing the lock the first has just made.
 */
import { Effect } from "effect"
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { isAlive } from "./ProcessLiveness.ts"

/** How long a lock file without a pid is taken for one another process is writing. */
const BEING_WRITTEN_MS = 5_000

/** The lock files this process holds: a lock naming our own pid is ours only if it is in here. */
const heldLocks = new Set<string>()

const ownerOf = (lockFile: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(lockFile, "utf8").trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

const isBeingWritten = (lockFile: string): boolean => {
  const stats = statSync(lockFile, { throwIfNoEntry: false })
  return stats !== undefined && Date.now() - stats.mtimeMs < BEING_WRITTEN_MS
}

const isHeld = (lockFile: string, owner: number | undefined): boolean =>
  owner === undefined ? isBeingWritten(lockFile) : owner === process.pid ? heldLocks.has(lockFile) : isAlive(owner)

/** Creates the lock file holding this pid; false when it exists already. */
const create = (lockFile: string): boolean => {
  try {
    writeFileSync(lockFile, `${process.pid}\n`, { flag: "wx", mode: 0o600 })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
}

/**
 * Holds `lockFile` for the life of the scope. Fails with `inUse(owner)` when another process
 * holds it (`owner` undefined while that process is writing it), with `unusable(cause)` when the
 * file cannot be read, written or removed.
 */
export const holdPidLockFile = <InUse, Unusable>(
  lockFile: string,
  errors: { readonly inUse: (owner: number | undefined) => InUse; readonly unusable: (cause: unknown) => Unusable }
) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const attempt = (run: () => boolean) => Effect.try({ try: run, catch: errors.unusable })
      if (!(yield* attempt(() => create(lockFile)))) {
        const owner = ownerOf(lockFile)
        if (isHeld(lockFile, owner)) return yield* Effect.fail(errors.inUse(owner))
        yield* Effect.logWarning(`Replacing the stale lock ${lockFile} of process ${owner ?? "unknown"}`)
        const created = yield* attempt(() => {
          rmSync(lockFile, { force: true })
          return create(lockFile)
        })
        if (!created) return yield* Effect.fail(errors.inUse(ownerOf(lockFile)))
      }
      heldLocks.add(lockFile)
    }),
    () =>
      Effect.sync(() => {
        heldLocks.delete(lockFile)
        if (ownerOf(lockFile) === process.pid) rmSync(lockFile, { force: true })
      })
  )
