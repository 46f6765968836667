/**
 * `search_files`: the lines matching a regular expression (or, when the pattern is not a valid
 * expression, containing it literally) in the files under a directory. Stops at
 * SEARCH_MAX_MATCHES matches or SEARCH_MAX_FILES files; passes over binary files and files over
 * SEARCH_MAX_FILE_BYTES.
 */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"
import {
  SEARCH_MAX_FILE_BYTES,
  SEARCH_MAX_FILES,
  SEARCH_MAX_LINE_CHARS,
  SEARCH_MAX_MATCHES,
  type SearchFilesInput,
  type SearchFilesOutput,
  type SearchMatch
} from "../../domain/machines/MachineTools.ts"
import { attempt } from "../Directories.ts"
import { textOf } from "../FileAccess.ts"
import { operationError } from "../OperationError.ts"
import { walk, type WalkEntry } from "./DirectoryWalk.ts"
import { resolveInput, type ToolContext } from "./ToolContext.ts"

const expressionOf = (pattern: string, caseInsensitive: boolean) => {
  const flags = caseInsensitive ? "iu" : "u"
  try {
    return new RegExp(pattern, flags)
  } catch {
    return new RegExp(pattern.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"), flags)
  }
}

export const searchFiles = (input: SearchFilesInput, context: ToolContext) =>
  Effect.gen(function*() {
    const path = yield* resolveInput(context, input.path ?? context.cwd)
    const stat = yield* attempt(path, () => fs.stat(path))
    const expression = expressionOf(input.pattern, input.case_insensitive ?? false)
    return yield* Effect.tryPromise({
      try: async (signal): Promise<SearchFilesOutput> => {
        const matches: Array<SearchMatch> = []
        let searched = 0
        let skipped = 0
        const result = (truncated: boolean) => ({ path, matches, files_searched: searched, files_skipped: skipped, truncated })
        const files: AsyncIterable<WalkEntry> | Array<WalkEntry> = stat.isDirectory()
          ? walk(path, true, signal)
          : [{ path: nodePath.basename(path), absolute: path, type: "file" }]
        for await (const file of files) {
          if (file.type !== "file") continue
          if (searched + skipped === SEARCH_MAX_FILES) return result(true)
          const size = await fs.stat(file.absolute).then((s) => s.size, () => Infinity)
          const text = size > SEARCH_MAX_FILE_BYTES
            ? undefined
            : await fs.readFile(file.absolute).then(textOf, () => undefined)
          if (text === undefined) {
            skipped++
            continue
          }
          searched++
          const lines = text.split("\n")
          for (let index = 0; index < lines.length; index++) {
            const line = lines[index]!
            if (!expression.test(line)) continue
            if (matches.length === SEARCH_MAX_MATCHES) return result(true)
            matches.push({ path: file.path, line: index + 1, text: line.slice(0, SEARCH_MAX_LINE_CHARS) })
          }
        }
        return result(false)
      },
      catch: (error) => operationError("internal_error", `searching ${path} failed: ${String(error)}`)
    })
  })
