/**
 * `search_files`: the lines matching a regular expression (or, when the pattern is not a valid
 * expression, containing it literally) in the files under a directory, or in one file. Stops at
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
import { openRegularFile, textOf } from "../FileAccess.ts"
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

/**
 * The text of a file to search; undefined when it is to be passed over: binary, over
 * SEARCH_MAX_FILE_BYTES, unreadable, or no longer a regular file (openRegularFile: a FIFO
 * swapped in since the walk saw a file is not waited on).
 */
const searchableText = async (path: string): Promise<string | undefined> => {
  const file = await openRegularFile(path).catch(() => undefined)
  if (file === undefined) return undefined
  try {
    return file.stats.size > SEARCH_MAX_FILE_BYTES ? undefined : await file.handle.readFile().then(textOf, () => undefined)
  } finally {
    await file.handle.close()
  }
}

export const searchFiles = (input: SearchFilesInput, context: ToolContext) =>
  Effect.gen(function*() {
    const path = yield* resolveInput(context, input.path ?? context.cwd)
    const stat = yield* attempt(path, () => fs.stat(path))
    if (!stat.isDirectory() && !stat.isFile()) {
      return yield* Effect.fail(operationError("not_a_file", `${path} is neither a directory nor a regular file: search_files searches the files under a directory, or one file`))
    }
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
          const text = await searchableText(file.absolute)
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
