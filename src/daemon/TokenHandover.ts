/**
 * The token out of the daemon's environment. A process's initial environment stays readable in
 * `/proc/<pid>/environ` (`ps eww` on macOS) by every process of its user for its whole life,
 * whatever it deletes from `process.env`; and a command's parent is the daemon. So a daemon
 * started with AGENT_PLATFORM_DAEMON_TOKEN replaces itself at once (execve: the same pid,
 * arguments and node options) with the variable left out, and the token handed over on stdin:
 * an open file that was unlinked before the token was written to it, emptied once read.
 */
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import * as nodePath from "node:path"

export const TOKEN_VARIABLE = "AGENT_PLATFORM_DAEMON_TOKEN"
/** Set for the replacement: the token is on its stdin. */
const HANDED_OVER = "AGENT_PLATFORM_DAEMON_TOKEN_ON_STDIN"

/** Runs the daemon again in this process with the token on stdin instead of in the environment; never returns. */
const handOver = (token: string): never => {
  const directory = fs.mkdtempSync(nodePath.join(tmpdir(), "agent-platform-daemon-"))
  // The lowest free descriptor: stdin's, the one descriptor besides stdout and stderr that execve keeps.
  fs.closeSync(0)
  const fd = fs.openSync(nodePath.join(directory, "token"), "w+", 0o600)
  // Unlinked before it holds the token: the token is never in a file another process can open by name.
  fs.rmSync(directory, { recursive: true })
  if (fd !== 0) throw new Error(`the token could not be handed over on stdin (the file opened as descriptor ${fd})`)
  fs.writeSync(fd, token, 0)
  const { [TOKEN_VARIABLE]: _token, ...environment } = process.env
  return process.execve!(
    process.execPath,
    [process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    { ...environment, [HANDED_OVER]: "1" }
  )
}

/** The token handed over on stdin, which is then emptied (`/proc/<pid>/fd/0` is readable too). */
const takeHandedOver = () => {
  const { size } = fs.fstatSync(0)
  const bytes = Buffer.alloc(size)
  fs.readSync(0, bytes, 0, size, 0)
  fs.ftruncateSync(0, 0)
  return bytes.toString("utf8")
}

/**
 * Called before anything else: a daemon started with the variable is replaced (above); its
 * replacement puts the token back in `process.env` for the command line to read, which removes it
 * from there before any command is spawned (Cli.ts). Not on Windows, which has no execve.
 */
export const keepTokenOutOfEnvironment = () => {
  if (process.env[HANDED_OVER] !== undefined) {
    delete process.env[HANDED_OVER]
    process.env[TOKEN_VARIABLE] = takeHandedOver()
    return
  }
  const token = process.env[TOKEN_VARIABLE]
  if (token !== undefined && process.platform !== "win32") handOver(token)
}
