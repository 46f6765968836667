/**
 * The raw file operations of the files route: a whole file read (text as UTF-8, anything else
 * in base64) and a whole file written under the digest precondition. Paths must be absolute.
 */
import { Effect } from "effect"
import * as nodePath from "node:path"
import {
  FILE_TRANSFER_MAX_BYTES,
  type FileContent,
  isBase64,
  type FileReadOperation,
  type FileWriteOperation,
  type WrittenFile
} from "../domain/machines/MachineFiles.ts"
import { resolveExisting, resolveForWrite } from "./Directories.ts"
import { digestOf, openExistingFile, readWhole, replaceFile, textOf } from "./FileAccess.ts"
import { operationError } from "./OperationError.ts"

const absolute = (path: string) =>
  nodePath.isAbsolute(path) && !path.includes("\0")
    ? Effect.succeed(nodePath.resolve(path))
    : Effect.fail(operationError("invalid_request", `path must be absolute (got ${JSON.stringify(path)})`))

export const readFileOperation = (operation: typeof FileReadOperation.Type) =>
  Effect.scoped(Effect.gen(function*() {
    const path = yield* Effect.flatMap(absolute(operation.path), resolveExisting)
    const file = yield* openExistingFile(path)
    const bytes = yield* readWhole(path, file, FILE_TRANSFER_MAX_BYTES, "the files route")
    const text = textOf(bytes)
    return {
      path,
      digest: digestOf(bytes),
      size: bytes.byteLength,
      encoding: text === undefined ? "base64" : "utf-8",
      content: text ?? Buffer.from(bytes).toString("base64"),
      read_only: file.readOnly
    } satisfies FileContent
  }))

export const writeFileOperation = (operation: typeof FileWriteOperation.Type) =>
  Effect.gen(function*() {
    if (operation.encoding === "base64" && !isBase64(operation.content)) {
      return yield* Effect.fail(operationError("invalid_request", "content is not valid base64"))
    }
    const bytes = Buffer.from(operation.content, operation.encoding === "base64" ? "base64" : "utf8")
    if (bytes.byteLength > FILE_TRANSFER_MAX_BYTES) {
      return yield* Effect.fail(operationError(
        "request_too_large",
        `the content is ${bytes.byteLength} bytes; the files route writes at most ${FILE_TRANSFER_MAX_BYTES}`
      ))
    }
    const target = yield* Effect.flatMap(absolute(operation.path), resolveForWrite)
    const written = yield* replaceFile(target, bytes, operation.expected_digest)
    return { path: target.path, ...written } satisfies WrittenFile
  })
