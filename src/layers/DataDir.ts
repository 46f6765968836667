/**
 * DATA_DIR holds the embedded database (its WAL included), the generated secret key and the
 * lock file: nobody but the server's user may read it. The directory is 0700 and every file in
 * it 0600 whatever the umask the server was started with: the process's umask becomes 077
 * before anything is created there (PGlite creates its files with the default modes), and a
 * directory created by an earlier version with wider modes is tightened at start.
 */
import { chmodSync, mkdirSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"

const DIRECTORY_MODE = 0o700
const FILE_MODE = 0o600

/** Creates `dir` (0700) if needed and tightens what is in it; from now on the process creates files 0600. */
export const prepareDataDir = (dir: string) => {
  process.umask(0o077)
  mkdirSync(dir, { recursive: true, mode: DIRECTORY_MODE })
  const pending = [dir]
  while (pending.length > 0) {
    const path = pending.pop()!
    const stats = statSync(path)
    const wanted = stats.isDirectory() ? DIRECTORY_MODE : FILE_MODE
    if ((stats.mode & 0o777 & ~wanted) !== 0) chmodSync(path, stats.mode & wanted)
    if (stats.isDirectory()) for (const name of readdirSync(path)) pending.push(join(path, name))
  }
}
