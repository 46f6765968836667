/**
 * `read_file`: a window of lines of a text file, at most READ_MAX_BYTES of text, with the digest
 * of the whole file. The file is read as a stream (any size); a binary file is reported as such,
 * without content.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { READ_DEFAULT_LINES, READ_MAX_BYTES, type ReadFileInput, type ReadFileOutput } from "../../domain/machines/MachineTools.ts"
import { attempt } from "../Directories.ts"
import { openExistingFile } from "../FileAccess.ts"
import { resolveInput, type ToolContext } from "./ToolContext.ts"

/** Collects the lines [first, first + count) of a text fed in pieces, up to READ_MAX_BYTES. */
class LineWindow {
  private readonly kept: Array<string> = []
  private keptBytes = 0
  /** The line being read, as far as it is kept (never much more than the budget). */
  private partial = ""
  private line = 1
  private newlines = 0
  private textAfterLastNewline = false
  /** The number of the last line kept; first - 1 while none is. */
  lastKept: number
  full = false
  /** The last kept line was cut at the budget. */
  cut = false

  private readonly first: number
  private readonly count: number

  constructor(first: number, count: number) {
    this.first = first
    this.count = count
    this.lastKept = first - 1
  }

  private inWindow() {
    return !this.full && this.line >= this.first && this.line < this.first + this.count
  }

  private keepLine(text: string) {
    const room = READ_MAX_BYTES - this.keptBytes
    const bytes = Buffer.byteLength(text)
    if (bytes > room) {
      this.full = true
      if (this.kept.length > 0) return
      // One line longer than the whole budget: its beginning, cut on a character boundary.
      text = new TextDecoder().decode(Buffer.from(text).subarray(0, room)).replace(/\uFFFD$/, "")
      this.cut = true
    }
    this.kept.push(text)
    this.keptBytes += Buffer.byteLength(text)
    this.lastKept = this.line
  }

  push(text: string) {
    const pieces = text.split("\n")
    pieces.forEach((piece, index) => {
      if (this.inWindow() && this.partial.length <= READ_MAX_BYTES) this.partial += piece
      if (index === pieces.length - 1) {
        if (piece !== "") this.textAfterLastNewline = true
        return
      }
      if (this.inWindow()) this.keepLine(this.partial + "\n")
      this.partial = ""
      this.line++
      this.newlines++
      this.textAfterLastNewline = false
    })
  }

  finish() {
    if (this.inWindow() && this.textAfterLastNewline) this.keepLine(this.partial)
    return { content: this.kept.join(""), totalLines: this.newlines + (this.textAfterLastNewline ? 1 : 0) }
  }
}

export const readFile = (input: ReadFileInput, context: ToolContext) =>
  Effect.scoped(Effect.gen(function*() {
    const path = yield* resolveInput(context, input.path)
    const file = yield* openExistingFile(path)
    const first = input.offset ?? 1
    const count = input.limit ?? READ_DEFAULT_LINES
    return yield* attempt(path, async (): Promise<ReadFileOutput> => {
      const hash = createHash("sha256")
      const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
      const window = new LineWindow(first, count)
      let size = 0
      let binary = false
      for await (const chunk of file.handle.createReadStream({ autoClose: false })) {
        const bytes = chunk as Buffer
        hash.update(bytes)
        size += bytes.byteLength
        if (binary) continue
        try {
          if (bytes.includes(0)) throw new Error("NUL byte")
          window.push(decoder.decode(bytes, { stream: true }))
        } catch {
          binary = true
        }
      }
      if (!binary) {
        try {
          window.push(decoder.decode())
        } catch {
          binary = true
        }
      }
      const digest = `sha256:${hash.digest("hex")}` as const
      if (binary) {
        return { path, digest, size, encoding: "binary", content: "", start_line: 0, end_line: 0, total_lines: 0, truncated: false }
      }
      const { content, totalLines } = window.finish()
      const more = window.lastKept < totalLines
      return {
        path,
        digest,
        size,
        encoding: "utf-8",
        content,
        start_line: first,
        end_line: window.lastKept,
        total_lines: totalLines,
        truncated: more || window.cut,
        ...(more ? { next_offset: window.lastKept + 1 } : {})
      }
    })
  }))
