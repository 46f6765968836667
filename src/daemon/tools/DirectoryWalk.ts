/**
 * The entries under a directory, breadth first and sorted by name, as `list_files` and
 * `search_files` see them: symlinks are reported, never followed (so a walk never leaves the
 * directory), and SKIPPED_DIRECTORIES are not descended into. A subdirectory that cannot be
 * read is passed over.
 */
import type { Dirent } from "node:fs"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"
import { SKIPPED_DIRECTORIES } from "../../domain/machines/MachineTools.ts"

export interface WalkEntry {
  /** Relative to the walked directory, with `/` between names. */
  readonly path: string
  readonly absolute: string
  readonly type: "file" | "directory" | "symlink" | "other"
}

const typeOf = (entry: Dirent): WalkEntry["type"] =>
  entry.isFile() ? "file" : entry.isDirectory() ? "directory" : entry.isSymbolicLink() ? "symlink" : "other"

export async function* walk(root: string, recursive: boolean, signal: AbortSignal): AsyncGenerator<WalkEntry> {
  const pending: Array<string> = [""]
  while (pending.length > 0) {
    const relative = pending.shift()!
    const entries = await fs.readdir(nodePath.join(root, relative), { withFileTypes: true }).catch((error) => {
      if (relative === "") throw error
      return []
    })
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      if (signal.aborted) return
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`
      const type = typeOf(entry)
      yield { path, absolute: nodePath.join(root, path), type }
      if (recursive && type === "directory" && !SKIPPED_DIRECTORIES.includes(entry.name)) pending.push(path)
    }
  }
}
