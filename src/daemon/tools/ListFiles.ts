/** `list_files`: the entries of a directory (or of its whole tree), at most LIST_MAX_ENTRIES. */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import { LIST_MAX_ENTRIES, type ListFilesInput, type ListFilesOutput } from "../../domain/machines/MachineTools.ts"
import { attempt } from "../Directories.ts"
import { operationError } from "../OperationError.ts"
import { walk } from "./DirectoryWalk.ts"
import { resolveInput, type ToolContext } from "./ToolContext.ts"

export const listFiles = (input: ListFilesInput, context: ToolContext) =>
  Effect.gen(function*() {
    const path = yield* resolveInput(context, input.path)
    const stat = yield* attempt(path, () => fs.stat(path))
    if (!stat.isDirectory()) {
      return yield* Effect.fail(operationError("unprocessable", `${path} is a file, not a directory: read it with read_file`))
    }
    return yield* Effect.tryPromise({
      try: async (signal): Promise<ListFilesOutput> => {
        const entries: Array<ListFilesOutput["entries"][number]> = []
        for await (const entry of walk(path, input.recursive ?? false, signal)) {
          if (entries.length === LIST_MAX_ENTRIES) return { path, entries, truncated: true }
          const size = entry.type === "file" ? await fs.lstat(entry.absolute).then((s) => s.size, () => undefined) : undefined
          entries.push({ path: entry.path, type: entry.type, ...(size === undefined ? {} : { size }) })
        }
        return { path, entries, truncated: false }
      },
      catch: (error) => operationError("internal_error", `listing ${path} failed: ${String(error)}`)
    })
  })
