/**
 * The `local` machine provider (docs/machine-pools.md): each machine is a daemon process on the
 * server's own host, in its own directory `<machines root>/<pool id>/<machine id>/` (`work/` is
 * the daemon's directory, `daemon.log` its output, `pid` its process). With bubblewrap installed
 * the daemon runs sandboxed: the host's files read-only (the project's too, for the daemon's
 * code), `/tmp` private, the server's data directory hidden, its own directory writable, its own
 * process namespace (stopping it stops every process it started).
 * Processes are started in a session of their own, so they outlive a server restart; `list`
 * finds them again from the pid files.
 */
import { Effect, Option, Schema } from "effect"
import { spawn } from "node:child_process"
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { MachineId } from "../../../domain/shared/Ids.ts"
import { AppConfig } from "../../../layers/AppConfig.ts"
import { onPath } from "../ProviderChecks.ts"
import { PROJECT_ROOT } from "./DaemonLaunch.ts"
import { type MachineLaunch, type MachineProvider, ProviderFailed, type ProviderMachine, type ProviderPool } from "./MachineProvider.ts"

const isMachineId = Schema.is(MachineId)

/** How long a stopped daemon gets to end by itself before it is killed. */
const STOP_GRACE_MS = 3_000

/** Whether process `pid` is alive and is the daemon of `machineId` (a reused pid is not). */
const isDaemonOf = (pid: number, machineId: string) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(machineId)
  } catch {
    return false
  }
}

const readPid = (dir: string) => {
  try {
    const pid = Number(readFileSync(join(dir, "pid"), "utf8").trim())
    return Number.isInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

const signalGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    // gone already
  }
}

export class LocalProvider extends Effect.Service<LocalProvider>()("LocalProvider", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const inMemory = config.dataDir.startsWith("memory://")
    const dataDir = inMemory ? null : resolve(config.dataDir)
    const root = dataDir === null ? join(tmpdir(), "agent-platform-machines") : join(dataDir, "machines")
    const bwrap = yield* onPath("bwrap")

    const machineDir = (poolId: string, machineId: string) => join(root, poolId, machineId)

    const stopProcess = (dir: string, machineId: string) =>
      Effect.promise(async () => {
        const pid = readPid(dir)
        if (pid === null || !isDaemonOf(pid, machineId)) return
        signalGroup(pid, "SIGTERM")
        const deadline = Date.now() + STOP_GRACE_MS
        while (Date.now() < deadline && isDaemonOf(pid, machineId)) await new Promise((r) => setTimeout(r, 100))
        signalGroup(pid, "SIGKILL")
      })

    /** The command that runs `node` with these arguments, sandboxed when bubblewrap is installed. */
    const command = (dir: string, work: string, nodeArguments: ReadonlyArray<string>) =>
      Option.match(bwrap, {
        onNone: () => ({ file: process.execPath, args: [...nodeArguments] }),
        onSome: (bwrapPath) => ({
          file: bwrapPath,
          args: [
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", "/tmp",
            // Mounted in this order: the project (the daemon's code) shown again should it lie
            // under /tmp, then the data directory hidden should it lie in the project, then the
            // machine's own directory, wherever it lies.
            "--ro-bind", PROJECT_ROOT, PROJECT_ROOT,
            ...(dataDir === null ? [] : ["--tmpfs", dataDir]),
            "--bind", dir, dir,
            "--unshare-pid",
            "--chdir", work,
            "--setenv", "HOME", work,
            "--",
            process.execPath,
            ...nodeArguments
          ]
        })
      })

    const start = (pool: ProviderPool, launch: MachineLaunch) =>
      Effect.gen(function*() {
        const dir = machineDir(pool.poolId, launch.machineId)
        yield* stopProcess(dir, launch.machineId)
        const work = join(dir, "work")
        return yield* Effect.try({
          try: () => {
            mkdirSync(work, { recursive: true })
            const log = openSync(join(dir, "daemon.log"), "a")
            const { args, file } = command(dir, work, launch.nodeArguments)
            const child = spawn(file, args, {
              cwd: work,
              detached: true,
              stdio: ["ignore", log, log],
              env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, ...launch.env }
            })
            closeSync(log)
            if (child.pid === undefined) throw new Error(`${file} could not be started`)
            child.unref()
            writeFileSync(join(dir, "pid"), String(child.pid))
            return String(child.pid)
          },
          catch: (error) =>
            new ProviderFailed({
              details: `Starting the daemon of machine ${launch.machineId} on the server host failed: ${
                error instanceof Error ? error.message : String(error)
              }`
            })
        })
      })

    const stop = (pool: ProviderPool, machineId: MachineId, _ref: string | null) =>
      Effect.gen(function*() {
        const dir = machineDir(pool.poolId, machineId)
        yield* stopProcess(dir, machineId)
        yield* Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      })

    const list = (pool: ProviderPool) =>
      Effect.sync((): ReadonlyArray<ProviderMachine> => {
        const poolDir = join(root, pool.poolId)
        if (!existsSync(poolDir)) return []
        return readdirSync(poolDir).filter(isMachineId).map((machineId) => {
          const pid = readPid(join(poolDir, machineId))
          return {
            machineId,
            ref: pid === null ? "" : String(pid),
            running: pid !== null && isDaemonOf(pid, machineId)
          }
        })
      })

    const provider: MachineProvider = {
      workDirectory: (poolId, machineId) => join(machineDir(poolId, machineId), "work"),
      start,
      stop,
      list
    }
    return provider
  })
}) {}
