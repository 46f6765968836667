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

/** A failed file-system call: what its errno means for the caller. */
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
    default:
      return operationError("internal_error", `${path}: ${error instanceof Error ? error.message : String(error)}`)
  }
}
