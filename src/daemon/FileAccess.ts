/**
 * Files as the executor reads and replaces them: digests, text or binary, the read-only rule and
 * the digest precondition of every replacement (a file that exists is replaced only by a caller
 * who names the digest it last read, and only while the file still has that digest), and the
 * lock that makes a precondition and the write it guards one step.
 */
import { Effect, type Scope, Semaphore } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { constants, type Stats } from "node:fs"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"
import type { FileDigest } from "../domain/machines/MachineFiles.ts"
import { attempt, type WriteTarget } from "./Directories.ts"
import { type OperationError, operationError } from "./OperationError.ts"

export const digestOf = (bytes: Uint8Array): FileDigest => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

/** The digest of an opened file, read as a stream. */
export const digestOfFile = (path: string, file: ExistingFile): Effect.Effect<FileDigest, OperationError> =>
  attempt(path, async () => {
    const hash = createHash("sha256")
    for await (const chunk of file.handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer)
    return `sha256:${hash.digest("hex")}` as FileDigest
  })

/** The text of the bytes, or undefined when they are binary: a NUL byte, or not valid UTF-8. A BOM is kept. */
export const textOf = (bytes: Uint8Array): string | undefined => {
  if (bytes.includes(0)) return undefined
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return undefined
  }
}

/** The lock of every path a write holds or waits for; a path's entry goes when its last user is done. */
const pathLocks = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()

/**
 * Runs `effect` while no other effect run through here for the same resolved path does. The daemon
 * is the one process serving its machine, so a precondition checked inside (the file exists or
 * not, its digest) still holds when the write it guards lands: of concurrent writes that expect
 * the same file, one wins and the others see what it wrote.
 */
export const exclusivelyAt = <A, E, R>(path: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const lock = pathLocks.get(path) ?? { semaphore: Semaphore.makeUnsafe(1), users: 0 }
      lock.users++
      pathLocks.set(path, lock)
      return lock
    }),
    (lock) => lock.semaphore.withPermits(1)(effect),
    (lock) =>
      Effect.sync(() => {
        if (--lock.users === 0) pathLocks.delete(path)
      })
  )

/**
 * Opens an existing regular file for reading; undefined when the path names anything else. Opening
 * a FIFO waits for a writer, holding one of libuv's four threadpool threads meanwhile (four such
 * opens stop every file operation of the daemon, its state file's included), and opening a device
 * may act on it: so the entry is looked at first and never opened unless it is a regular file.
 * What is opened may have been swapped since (a FIFO made under the same name): O_NONBLOCK opens
 * a FIFO at once, and the descriptor's own fstat decides. Reading a regular file ignores the flag.
 */
export const openRegularFile = async (path: string): Promise<{ readonly handle: fs.FileHandle; readonly stats: Stats } | undefined> => {
  if (!(await fs.stat(path)).isFile()) return undefined
  const handle = await fs.open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const stats = await handle.stat().catch(async (error) => {
    await handle.close()
    throw error
  })
  if (stats.isFile()) return { handle, stats }
  await handle.close()
  return undefined
}

export interface ExistingFile {
  /** Open for reading until the scope that opened it closes; read it once (a read moves its offset). */
  readonly handle: fs.FileHandle
  readonly size: number
  readonly mode: number
  /** Its permission bits let nobody write it, or the daemon's user may not. */
  readonly readOnly: boolean
}

/** An existing regular file (already resolved), open for reading: `not_a_file` for anything else. */
export const openExistingFile = (path: string): Effect.Effect<ExistingFile, OperationError, Scope.Scope> =>
  Effect.acquireRelease(
    attempt(path, () => openRegularFile(path)),
    (opened) => opened === undefined ? Effect.void : Effect.promise(() => opened.handle.close())
  ).pipe(
    Effect.flatMap((opened) =>
      opened === undefined
        ? Effect.fail(operationError("not_a_file", `${path} is a directory or another kind of entry, not a file`))
        : Effect.promise(async () => {
          const { handle, stats } = opened
          const writable = (stats.mode & 0o222) !== 0 && await fs.access(path, constants.W_OK).then(() => true, () => false)
          return { handle, size: stats.size, mode: stats.mode & 0o7777, readOnly: !writable }
        })
    )
  )

/** The whole file, if it is at most `maxBytes` long (`unprocessable` otherwise). */
export const readWhole = (path: string, file: ExistingFile, maxBytes: number, purpose: string) =>
  file.size > maxBytes
    ? Effect.fail(operationError("unprocessable", `${path} is ${file.size} bytes; ${purpose} handles files up to ${maxBytes} bytes`))
    : attempt(path, () => file.handle.readFile())

export const refuseReadOnly = (path: string, file: ExistingFile) =>
  file.readOnly ? Effect.fail(operationError("file_read_only", `${path} is read-only`)) : Effect.void

/**
 * The digest precondition: `current` is the file's digest now (undefined when it does not exist),
 * `expected` the caller's.
 */
export const checkDigest = (path: string, current: FileDigest | undefined, expected: FileDigest | undefined) => {
  if (current === undefined) {
    return expected === undefined
      ? Effect.void
      : Effect.fail(operationError("file_content_conflict", `${path} no longer exists; write it without expected_digest to create it`))
  }
  if (expected === undefined) {
    return Effect.fail(operationError(
      "expected_digest_required",
      `${path} exists: give the digest you last read as expected_digest to replace it (current_digest is its digest now; confirm the replacement before using it)`,
      current
    ))
  }
  return expected === current
    ? Effect.void
    : Effect.fail(operationError("file_content_conflict", `${path} changed since it was read: read it again`, current))
}

/**
 * The most of a file's name a temporary file's name repeats, in UTF-8 bytes: with the dot, the
 * random part and `.tmp` (18 bytes) the name stays within the 255 bytes most file systems allow
 * for any name the file itself may have.
 */
const TEMPORARY_NAME_BYTES = 200

/** The longest start of `name` of at most `maxBytes` UTF-8 bytes, cut between characters. */
const startOf = (name: string, maxBytes: number): string => {
  let bytes = 0
  let end = 0
  for (const char of name) {
    bytes += Buffer.byteLength(char)
    if (bytes > maxBytes) break
    end += char.length
  }
  return name.slice(0, end)
}

/**
 * Writes the file through a temporary file renamed over it, so that a reader never sees half of
 * it; keeps the permission bits of the file it replaces, creates missing parent directories.
 */
export const writeAtomically = (target: WriteTarget, bytes: Uint8Array, mode: number | undefined) =>
  attempt(target.path, async () => {
    const directory = nodePath.dirname(target.path)
    if (!target.parentExists) await fs.mkdir(directory, { recursive: true })
    const name = startOf(nodePath.basename(target.path), TEMPORARY_NAME_BYTES)
    const temporary = nodePath.join(directory, `.${name}.${randomBytes(6).toString("hex")}.tmp`)
    try {
      await fs.writeFile(temporary, bytes, { flag: "wx", ...(mode === undefined ? {} : { mode }) })
      if (mode !== undefined) await fs.chmod(temporary, mode)
      await fs.rename(temporary, target.path)
    } catch (error) {
      await fs.rm(temporary, { force: true })
      throw error
    }
  })

export interface Written {
  readonly digest: FileDigest
  readonly size: number
  readonly created: boolean
}

/**
 * Creates or replaces the whole file under the digest precondition, checked and met under the
 * path's lock. Whether the file exists is looked at there too: another write may have created it
 * since the target was resolved.
 */
export const replaceFile = (
  target: WriteTarget,
  bytes: Uint8Array,
  expected: FileDigest | undefined
): Effect.Effect<Written, OperationError> =>
  exclusivelyAt(
    target.path,
    Effect.gen(function*() {
      const existing = yield* openExistingFile(target.path).pipe(
        Effect.catchIf((error) => error.code === "not_found", () => Effect.succeed(undefined))
      )
      if (existing !== undefined) yield* refuseReadOnly(target.path, existing)
      const current = existing === undefined ? undefined : yield* digestOfFile(target.path, existing)
      yield* checkDigest(target.path, current, expected)
      yield* writeAtomically(target, bytes, existing?.mode)
      return { digest: digestOf(bytes), size: bytes.byteLength, created: existing === undefined }
    }).pipe(Effect.scoped)
  )
