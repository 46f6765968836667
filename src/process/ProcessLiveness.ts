/**
 * Whether the process that wrote a lock file is still running (the embedded database's
 * DATA_DIR/pg.lock, the daemon's state file lock).
 *
 * A process that has exited but is not yet reaped by its parent (a zombie) is not running, though
 * `kill(pid, 0)` still finds it: a server killed with its parent (SIGKILL to its process group)
 * stays a zombie until the system's init reaps it, which in a container may take a while. On
 * Linux the process's state in /proc says so; elsewhere `kill(pid, 0)` is the answer.
 */
import { readFileSync } from "node:fs"

/** "pid (comm) state ...": the name may hold spaces and parentheses, so the state follows the last ")". */
const isZombie = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))
  } catch {
    return false
  }
}

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  return !isZombie(pid)
}
