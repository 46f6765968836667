/**
 * The directories a daemon registered, and the one rule every file operation follows: a path is
 * used only once it lies inside one of the directories as written (after `.` and `..` are
 * normalised) and its real path (every symlink followed) does too. A path outside is refused
 * before anything is read, its existence included: the file system is not asked about it, and
 * a symlink inside is followed only as far as the directories (and the directories above them),
 * so a link that leads out is refused alike whether its target exists or not. Operations then
 * work on the resolved path, never on the path they were given.
 */
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"
import { fromSystemError, type OperationError, operationError } from "./OperationError.ts"

/** The real paths of the machine's directories. */
export class Directories extends Context.Service<Directories, ReadonlyArray<string>>()("daemon/Directories") {
  /** Resolves the given directories; each must exist and be a directory. */
  static readonly layer = (paths: ReadonlyArray<string>) =>
    Layer.effect(
      Directories,
      Effect.forEach(paths, (path) =>
        Effect.tryPromise({
          try: async () => {
            const real = await fs.realpath(nodePath.resolve(path))
            if (!(await fs.stat(real)).isDirectory()) throw new Error("it is not a directory")
            return real
          },
          catch: (error) => new Error(`The directory ${path} cannot be used: ${error instanceof Error ? error.message : error}`)
        })).pipe(Effect.map((reals) => [...new Set(reals)]))
    )
}

/** Runs a file-system call; a failure becomes the OperationError its errno means. */
export const attempt = <A>(path: string, call: () => Promise<A>): Effect.Effect<A, OperationError> =>
  Effect.tryPromise({ try: call, catch: (error) => fromSystemError(error, path) })

const isInside = (roots: ReadonlyArray<string>, path: string) =>
  roots.some((root) => path === root || path.startsWith(root.endsWith(nodePath.sep) ? root : root + nodePath.sep))

/** `path` is one of the directories or above one (`/`, `/home` for `/home/me/code`): known to exist, safe to look at. */
const isOnTheWay = (roots: ReadonlyArray<string>, path: string) =>
  isInside(roots, path) || roots.some((root) => root.startsWith(path.endsWith(nodePath.sep) ? path : path + nodePath.sep))

const outside = (path: string, roots: ReadonlyArray<string>) =>
  operationError("forbidden", `${path} lies outside the machine's directories (${roots.join(", ")})`)

/** A path made absolute: as given when absolute, else against `cwd`; normalised. */
export const absolutePath = (path: string, cwd: string): Effect.Effect<string, OperationError> =>
  path.includes("\0")
    ? Effect.fail(operationError("invalid_request", "a path must not contain a NUL character"))
    : Effect.succeed(nodePath.resolve(cwd, path))

/** The most symbolic links one resolution follows (Linux's MAXSYMLINKS); past it, ELOOP as the kernel says. */
const MAX_LINKS = 40

const systemError = (code: string) => Object.assign(new Error(code), { code })

/**
 * How far a path resolves: `real`, the real path of its longest existing start, and `missing`, the
 * names after it that do not exist (none: the whole path exists). `throughLink`: the first missing
 * name came from a symlink's target (a dangling link on the way).
 */
interface Resolution {
  readonly real: string
  readonly missing: ReadonlyArray<string>
  readonly throughLink: boolean
}

/**
 * Resolves an absolute path as realpath(3) does, one name at a time, but looks only
 * at the directories and what lies above or inside them: a path outside them as written, or a
 * symlink on the way that leads out, is `forbidden` (the same answer for every path outside,
 * whatever exists there). A failed look-up fails with `failure` of its error (by default what its
 * errno means, `fromSystemError`).
 */
const resolveInside = (
  path: string,
  failure: (error: unknown) => OperationError = (error) => fromSystemError(error, path)
): Effect.Effect<Resolution, OperationError, Directories> =>
  Effect.gen(function*() {
    const roots = yield* Directories
    if (!isInside(roots, nodePath.resolve(path))) return yield* Effect.fail(outside(path, roots))
    return yield* Effect.tryPromise({
      try: async (): Promise<Resolution | undefined> => {
        const pending = nodePath.resolve(path).split(nodePath.sep).filter((name) => name !== "")
        // How many of the first pending names came from symlinks' targets.
        let fromLinks = 0
        let links = 0
        let real: string = nodePath.sep
        while (pending.length > 0) {
          const name = pending.shift()!
          const viaLink = fromLinks > 0
          if (viaLink) fromLinks--
          if (name === "." || name === "..") {
            if (name === "..") real = nodePath.dirname(real)
            continue
          }
          const next = nodePath.join(real, name)
          if (!isOnTheWay(roots, next)) return undefined
          const stat = await fs.lstat(next).catch((error) => {
            if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
            throw error
          })
          if (stat === undefined) return { real, missing: [name, ...pending], throughLink: viaLink }
          if (stat.isSymbolicLink()) {
            if (++links > MAX_LINKS) throw systemError("ELOOP")
            const target = await fs.readlink(next)
            const names = target.split(nodePath.sep).filter((part) => part !== "")
            pending.unshift(...names)
            fromLinks += names.length
            if (nodePath.isAbsolute(target)) real = nodePath.sep
            continue
          }
          if (pending.length > 0 && !stat.isDirectory()) throw systemError("ENOTDIR")
          real = next
        }
        return { real, missing: [], throughLink: false }
      },
      catch: failure
    }).pipe(
      // A link may lead to a directory above the directories (looked at on the way): where the
      // path ends, it must be inside them.
      Effect.flatMap((resolution) =>
        resolution === undefined || !isInside(roots, resolution.real) ? Effect.fail(outside(path, roots)) : Effect.succeed(resolution)
      )
    )
  })

/** The real path of an existing entry, inside the directories. */
export const resolveExisting = (path: string): Effect.Effect<string, OperationError, Directories> =>
  Effect.flatMap(resolveInside(path), ({ missing, real }) =>
    missing.length === 0 ? Effect.succeed(real) : Effect.fail(fromSystemError(systemError("ENOENT"), path)))

/**
 * Refuses a write into a git directory: a resolved path with a name `.git` (in any case, as a
 * case-insensitive file system reads it), which covers a repository's `.git`, a worktree's `.git`
 * file and its git directory under the repository's `.git/worktrees/`. Git runs the commands a
 * repository's config and hooks name (core.fsmonitor, a filter, a hook) when the daemon, or
 * anyone, runs git there: a file write, which `accept_edits` lets run without approval, would run
 * a command, which needs one.
 */
const refuseGitDirectory = (path: string, real: string) =>
  real.split(nodePath.sep).some((name) => name.toLowerCase() === ".git")
    ? Effect.fail(operationError(
      "forbidden",
      `${path} lies in a git directory (.git): files there are not written by the daemon's file operations, since git runs ` +
        "the commands its configuration and hooks name; change them with a command (run_command) or git itself"
    ))
    : Effect.void

/** The real path of an existing file to change: as for a read, and outside any git directory. */
export const resolveExistingForWrite = (path: string): Effect.Effect<string, OperationError, Directories> =>
  Effect.tap(resolveExisting(path), (real) => refuseGitDirectory(path, real))

/**
 * Where a file to create or replace lives: its real path and whether its directory exists. Whether
 * the file exists is for the write to look at, under the path's lock (`exclusivelyAt`).
 */
export interface WriteTarget {
  readonly path: string
  readonly parentExists: boolean
}

/**
 * The target of a write. An existing path resolves as for a read. A new one resolves through its
 * nearest existing ancestor, which must lie inside the directories; a dangling symlink on the
 * way (which a write would follow) is refused, and so is a target in a git directory.
 */
export const resolveForWrite = (path: string): Effect.Effect<WriteTarget, OperationError, Directories> =>
  Effect.flatMap(
    resolveInside(path, (error) =>
      (error as NodeJS.ErrnoException | undefined)?.code === "ENOTDIR"
        ? operationError("invalid_request", `a parent of ${path} is a file, not a directory`)
        : fromSystemError(error, path)),
    ({ missing, real, throughLink }) => {
      if (throughLink) return Effect.fail(operationError("forbidden", `${path} goes through a symbolic link to a missing target`))
      const target = nodePath.join(real, ...missing)
      return Effect.as(refuseGitDirectory(path, target), { path: target, parentExists: missing.length <= 1 })
    }
  )
