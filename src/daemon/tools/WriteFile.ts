/** `write_file`: creates a file (and its missing directories) or replaces one under the digest precondition. */
import { Effect } from "effect"
import { EDIT_MAX_BYTES, type WriteFileInput, type WriteFileOutput } from "../../domain/machines/MachineTools.ts"
import { absolutePath, resolveForWrite } from "../Directories.ts"
import { replaceFile } from "../FileAccess.ts"
import { operationError } from "../OperationError.ts"
import type { ToolContext } from "./ToolContext.ts"

export const writeFile = (input: WriteFileInput, context: ToolContext) =>
  Effect.gen(function*() {
    const bytes = Buffer.from(input.content, "utf8")
    if (bytes.byteLength > EDIT_MAX_BYTES) {
      return yield* Effect.fail(
        operationError("request_too_large", `the content is ${bytes.byteLength} bytes; write_file writes at most ${EDIT_MAX_BYTES}`)
      )
    }
    const target = yield* Effect.flatMap(absolutePath(input.path, context.cwd), resolveForWrite)
    const written = yield* replaceFile(target, bytes, input.expected_digest)
    return { path: target.path, ...written } satisfies WriteFileOutput
  })
