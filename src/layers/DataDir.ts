/**
 * DATA_DIR holds the embedded database (its WAL included), the generated secret key, the lock
 * file and the directories of `local` pool machines: nobody but the server's user may read them.
 * The directory is 0700 and what the server keeps in it 0700 (directories) and 0600 (files)
 * whatever the umask the server was started with: the process's umask becomes 077 before
 * anything is created there, what an earlier version left wider is tightened at start, and the
 * embedded database's files (PGlite makes them 0666) once it has opened and once it has closed.
 * Anything else in the directory is the operator's and keeps its modes. A directory that cannot
 * be created or made private is one line naming DATA_DIR, the path and the reason.
 */
import { Data, Effect } from "effect"
import { chmodSync, mkdirSync, readdirSync, type Stats, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { getSystemErrorMap } from "node:util"

/** The embedded database's directory, tightened whole. */
export const DATABASE_DIRECTORY = "pg"
/** The lock file of the process that has the embedded database open (Database.ts). */
export const LOCK_FILE = "pg.lock"
/** The generated secret key (SecretKey.ts). */
export const SECRET_KEY_FILE = "secret.key"
/**
 * The `local` pool machines' directories (LocalProvider.ts): this directory alone is tightened,
 * the machines' working files keep their modes (a checked-out script stays executable).
 */
export const MACHINES_DIRECTORY = "machines"

const DIRECTORY_MODE = 0o700
const FILE_MODE = 0o600

export class DataDirectoryUnusable extends Data.TaggedError("DataDirectoryUnusable")<{ readonly message: string }> {}

/** What the system says of a failed call (`not a directory`), else the error as it is. */
const reasonOf = (error: unknown): string => {
  const errno = (error as NodeJS.ErrnoException).errno
  return (errno === undefined ? undefined : getSystemErrorMap().get(errno)?.[1]) ?? String(error)
}

/** `mkdir`, a directory that exists already being no failure (anything else there is). */
const makeDirectory = (path: string) => {
  try {
    mkdirSync(path, { mode: DIRECTORY_MODE })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !statSync(path).isDirectory()) throw error
  }
}

/**
 * `mkdir -p`, without Node's `recursive`: on Node 20 and 22 that never returns (a synchronous
 * loop, deaf to signals) when a parent exists but the directory is still refused with ENOENT
 * (`/proc/nope`). Here a missing parent is created once, and a second ENOENT is the answer.
 */
const createDirectory = (path: string): void => {
  try {
    makeDirectory(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || dirname(path) === path) throw error
    createDirectory(dirname(path))
    makeDirectory(path)
  }
}

/** Takes from `path` the permission bits beyond 0700 (a directory) or 0600 (a file). */
const tighten = (path: string, stats: Stats) => {
  const wanted = stats.isDirectory() ? DIRECTORY_MODE : FILE_MODE
  if ((stats.mode & 0o777 & ~wanted) !== 0) chmodSync(path, stats.mode & wanted)
}

/** Tightens the entry `name` of `dir` when it exists, and with `whole` everything under it. */
const tightenEntry = (dir: string, name: string, whole: boolean) => {
  const pending = [join(dir, name)]
  while (pending.length > 0) {
    const path = pending.pop()!
    const stats = statSync(path, { throwIfNoEntry: false })
    if (stats === undefined) continue
    tighten(path, stats)
    if (whole && stats.isDirectory()) for (const entry of readdirSync(path)) pending.push(join(path, entry))
  }
}

/** Makes `dir` and what the server keeps in it private. */
const tightenDataDir = (dir: string) => {
  tightenEntry(dir, ".", false)
  tightenEntry(dir, DATABASE_DIRECTORY, true)
  tightenEntry(dir, LOCK_FILE, false)
  tightenEntry(dir, SECRET_KEY_FILE, false)
  tightenEntry(dir, MACHINES_DIRECTORY, false)
}

/** The one line of a failure with `path`: `DATA_DIR: cannot create /dev/null/x: not a directory`. */
export const unusable = (action: string, path: string, error: unknown) =>
  new DataDirectoryUnusable({ message: `DATA_DIR: cannot ${action} ${path}: ${reasonOf(error)}` })

/**
 * Tightens the embedded database's files again: PGlite makes them 0666 whatever the umask (970 of
 * a new database's 1,000 entries, and each file it adds later), behind its 0700 directories.
 */
export const tightenDatabaseDirectory = (dir: string): Effect.Effect<void, DataDirectoryUnusable> =>
  Effect.try({
    try: () => tightenEntry(dir, DATABASE_DIRECTORY, true),
    catch: (error) => unusable("make private", (error as NodeJS.ErrnoException).path ?? dir, error)
  })

/**
 * Creates `dir` (0700) if needed, makes it and what the server keeps in it private, and from now
 * on has the process create files 0600.
 */
export const prepareDataDir = (dir: string): Effect.Effect<void, DataDirectoryUnusable> =>
  Effect.sync(() => process.umask(0o077)).pipe(
    Effect.andThen(Effect.try({ try: () => createDirectory(dir), catch: (error) => unusable("create", dir, error) })),
    Effect.andThen(Effect.try({
      try: () => tightenDataDir(dir),
      catch: (error) => unusable("make private", (error as NodeJS.ErrnoException).path ?? dir, error)
    }))
  )
