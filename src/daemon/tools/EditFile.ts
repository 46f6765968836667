/**
 * `edit_file`: replaces exact text in a text file of at most EDIT_MAX_BYTES (and leaves one of at
 * most EDIT_MAX_BYTES), under the digest precondition (checked first, so a caller without the
 * digest learns it). The text must occur once, or `replace_all` be set. The file is read, checked
 * and written under its path's lock.
 */
import { Effect } from "effect"
import { EDIT_MAX_BYTES, type EditFileInput, type EditFileOutput } from "../../domain/machines/MachineTools.ts"
import { absolutePath, resolveExistingForWrite } from "../Directories.ts"
import { checkDigest, digestOf, exclusivelyAt, openExistingFile, readWhole, refuseReadOnly, textOf, writeAtomically } from "../FileAccess.ts"
import { operationError } from "../OperationError.ts"
import type { ToolContext } from "./ToolContext.ts"

/** The text as UTF-8 writes it: an unpaired surrogate is U+FFFD. */
const wellFormed = (text: string) => Buffer.from(text, "utf8").toString("utf8")

const occurrences = (text: string, search: string) => {
  let count = 0
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) count++
  return count
}

const editAt = (path: string, input: EditFileInput) =>
  Effect.gen(function*() {
    const file = yield* openExistingFile(path)
    yield* refuseReadOnly(path, file)
    const bytes = yield* readWhole(path, file, EDIT_MAX_BYTES, "edit_file")
    yield* checkDigest(path, digestOf(bytes), input.expected_digest)
    const text = textOf(bytes)
    if (text === undefined) return yield* Effect.fail(operationError("unprocessable", `${path} is a binary file, not text`))
    // Well-formed, as the file's text is: each replacement then changes the file by exactly the
    // difference of their UTF-8 lengths.
    const oldText = wellFormed(input.old_text)
    const newText = wellFormed(input.new_text)
    const count = occurrences(text, oldText)
    if (count === 0) return yield* Effect.fail(operationError("unprocessable", `old_text does not occur in ${path}`))
    if (count > 1 && input.replace_all !== true) {
      return yield* Effect.fail(operationError(
        "unprocessable",
        `old_text occurs ${count} times in ${path}: give more surrounding text to pick one, or set replace_all`
      ))
    }
    // Its size is known before it is built: replacing every short text by a long one would
    // otherwise build a string of up to count times the long one (500 MB for a 4 MiB file of "a"
    // with 120 characters for each) only to refuse it.
    const size = bytes.byteLength + count * (Buffer.byteLength(newText) - Buffer.byteLength(oldText))
    if (size > EDIT_MAX_BYTES) {
      return yield* Effect.fail(operationError("request_too_large", `the edited file would be ${size} bytes; edit_file writes at most ${EDIT_MAX_BYTES}`))
    }
    const edited = Buffer.from(text.split(oldText).join(newText), "utf8")
    yield* writeAtomically({ path, parentExists: true }, edited, file.mode)
    return { path, digest: digestOf(edited), size: edited.byteLength, replacements: count } satisfies EditFileOutput
  })

export const editFile = (input: EditFileInput, context: ToolContext) =>
  absolutePath(input.path, context.cwd).pipe(
    Effect.flatMap(resolveExistingForWrite),
    Effect.flatMap((path) => exclusivelyAt(path, Effect.scoped(editAt(path, input))))
  )
