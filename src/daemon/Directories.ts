/**
 * The directories a daemon registered, and the one rule every file operation follows: a path is
 * used only once it is resolved to its real path (`..` and every symlink followed) and that
 * real path lies inside one of the directories. A path that escapes, through `..` or a symlink
 * anywhere in it, is refused before anything is read or written. Operations then work on the
 * resolved path, never on the path they were given.
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

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code

const isInside = (roots: ReadonlyArray<string>, real: string) =>
  roots.some((root) => real === root || real.startsWith(root.endsWith(nodePath.sep) ? root : root + nodePath.sep))

const outside = (path: string, roots: ReadonlyArray<string>) =>
  operationError("forbidden", `${path} lies outside the machine's directories (${roots.join(", ")})`)

/** A request path made absolute: as given when absolute, else against `cwd`; normalised. */
export const absolutePath = (path: string, cwd: string): Effect.Effect<string, OperationError> =>
  path.includes("\0")
    ? Effect.fail(operationError("invalid_request", "a path must not contain a NUL character"))
    : Effect.succeed(nodePath.resolve(cwd, path))

/** The real path of an existing entry, inside the directories. */
export const resolveExisting = (path: string): Effect.Effect<string, OperationError, Directories> =>
  Effect.flatMap(Directories, (roots) =>
    attempt(path, () => fs.realpath(path)).pipe(
      Effect.filterOrFail((real) => isInside(roots, real), () => outside(path, roots))
    ))

/** Where a file to create or replace lives: its real path, whether it exists, whether its directory does. */
export interface WriteTarget {
  readonly path: string
  readonly exists: boolean
  readonly parentExists: boolean
}

/**
 * The target of a write. An existing path resolves as for a read. A new one resolves through its
 * nearest existing ancestor, which must lie inside the directories; a dangling symlink on the
 * way (which a write would follow outside) is refused.
 */
export const resolveForWrite = (path: string): Effect.Effect<WriteTarget, OperationError, Directories> =>
  Effect.gen(function*() {
    const roots = yield* Directories
    const missing: Array<string> = []
    let current = path
    for (;;) {
      const real = yield* Effect.tryPromise(() => fs.realpath(current)).pipe(
        Effect.map((real) => ({ real })),
        Effect.catch(({ cause }) =>
          errnoOf(cause) === "ENOENT"
            ? Effect.succeed({ real: undefined })
            : Effect.fail(
              errnoOf(cause) === "ENOTDIR"
                ? operationError("invalid_request", `a parent of ${path} is a file, not a directory`)
                : fromSystemError(cause, current)
            )
        )
      )
      if (real.real !== undefined) {
        if (!isInside(roots, real.real)) return yield* Effect.fail(outside(path, roots))
        return { path: nodePath.join(real.real, ...missing), exists: missing.length === 0, parentExists: missing.length <= 1 }
      }
      const isLink = yield* Effect.promise(() => fs.lstat(current).then(() => true, () => false))
      if (isLink) {
        return yield* Effect.fail(operationError("forbidden", `${current} is a symbolic link to a missing target`))
      }
      const parent = nodePath.dirname(current)
      if (parent === current) return yield* Effect.fail(outside(path, roots))
      missing.unshift(nodePath.basename(current))
      current = parent
    }
  })
