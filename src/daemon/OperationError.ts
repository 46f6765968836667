/**
 * A request that cannot be done: the failure the daemon answers with (OperationFailure). Raised
 * anywhere in the executor, turned into a failed result in one place (Executor.ts).
 */
import { Data } from "effect"
import type { FileDigest } from "../domain/machines/MachineFiles.ts"
import type { OperationFailureCode } from "../domain/machines/OperationFailure.ts"

export class OperationError extends Data.TaggedError("OperationError")<{
  readonly code: OperationFailureCode
  readonly message: string
  readonly current_digest?: FileDigest | undefined
}> {}

export const operationError = (code: OperationFailureCode, message: string, currentDigest?: FileDigest) =>
  new OperationError({ code, message, ...(currentDigest === undefined ? {} : { current_digest: currentDigest }) })

/**
 * A failed file-system call: what its errno means for the caller. What the path itself makes
 * impossible is the caller's to change (a name too long, a path the file system does not take, a
 * loop of symbolic links on the way): a client error, so the files route answers it 4xx and a
 * model reads it as its own mistake. `internal_error` (503 on the files route) is left for
 * failures of the machine itself: I/O errors, a full disk, too many open files.
 */
export const fromSystemError = (error: unknown, path: string): OperationError => {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return operationError("not_found", `${path} does not exist`)
    case "EACCES":
    case "EPERM":
      return operationError("forbidden", `the daemon's user may not access ${path}`)
    case "EISDIR":
      return operationError("not_a_file", `${path} is a directory, not a file`)
    case "EROFS":
      return operationError("file_read_only", `${path} lies on a read-only file system`)
    case "ENAMETOOLONG":
      return operationError(
        "invalid_request",
        `${path} is too long for the machine's file system: a name in it is longer than the file system allows ` +
          "(255 bytes on most), or the whole path is"
      )
    case "EINVAL":
      return operationError("invalid_request", `${path} is not a valid path on the machine's file system`)
    case "ELOOP":
      return operationError(
        "unprocessable",
        `${path} cannot be resolved: it goes through a loop of symbolic links, or through too many of them`
      )
    default:
      return operationError("internal_error", `${path}: ${error instanceof Error ? error.message : String(error)}`)
  }
}
