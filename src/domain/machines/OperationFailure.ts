/**
 * Why an operation on a machine failed: a stable `code`, a message for a person or a model, and
 * for digest preconditions the file's `current_digest`. The file codes are the API's own error
 * codes, so the files route answers them unchanged; the others are the daemon's.
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { FileDigest } from "./MachineFiles.ts"

export const OperationFailureCode = Schema.Literals([
  /** The request does not decode, or a path is not usable (not absolute and no cwd to resolve it, a NUL, a name too long for the file system). */
  "invalid_request",
  /** The path lies outside the machine's directories (after resolving `..` and symlinks), or the OS refused access. */
  "forbidden",
  /** Nothing exists at the path. */
  "not_found",
  /** A file was needed and the path is a directory or another kind of entry. */
  "not_a_file",
  /** The file may not be written. */
  "file_read_only",
  /** The file exists and the write gave no `expected_digest`; `current_digest` is its digest. */
  "expected_digest_required",
  /** The file changed since the caller read it; `current_digest` is its digest now (absent if it no longer exists). */
  "file_content_conflict",
  /** The content to write is larger than the operation accepts. */
  "request_too_large",
  /** The request is well formed but cannot be done: a file too large to read whole, text to replace that is absent or ambiguous, a path that is not a directory, a loop of symbolic links. */
  "unprocessable",
  /** The server cancelled the request. */
  "cancelled",
  /** The daemon stopped while the request ran; it was not run again. */
  "interrupted",
  /** The request id was executed and its result acknowledged before; it was not run again. */
  "already_executed",
  /** This daemon does not know the operation or tool (it is older than the server). */
  "unsupported_operation",
  /** Something unexpected failed on the machine. */
  "internal_error",
  /** A machine pool could not give the call a machine within its limits in time (the server's, docs/machine-pools.md). */
  "managed_work_admission_denied",
  /** The pool's provider failed to start the machine, or the machine was deleted before the call ran (the server's). */
  "upstream_unavailable"
])
export type OperationFailureCode = typeof OperationFailureCode.Type

export const OperationFailure = Schema.Struct({
  code: OperationFailureCode,
  message: Schema.String,
  current_digest: optional(FileDigest)
}).annotate({ identifier: "OperationFailure" })
export type OperationFailure = typeof OperationFailure.Type
