/**
 * The `local` machine provider (docs/machine-pools.md): each machine is a daemon process on the
 * server's own host, in its own directory `<machines root>/<pool id>/<machine id>/` (`work/` is
 * the daemon's directory, `daemon.log` its output, `pid` its process). With bubblewrap installed
 * the daemon runs sandboxed: the host's files read-only (the project's too, for the daemon's
 * code), `/tmp` private, the server's data directory hidden, its own directory writable, its own
 * process namespace (stopping it stops every process it started).
 * Processes are started in a session of their own, so they outlive a server restart; `list`
 * finds them again from the pid files. With DATA_DIR `memory://` the server keeps nothing on disk,
 * so nothing it starts outlives it: when it stops, the machines it started are stopped and their
 * directories removed.
 */
import { Context, Deferred, Duration, Effect, Layer, Option, Redacted, Schedule, Schema } from "effect"
import { spawn } from "node:child_process"
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmdirSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { hostname, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { MachineId } from "../../../domain/shared/Ids.ts"
import { AppConfig } from "../../../layers/AppConfig.ts"
import { MACHINES_DIRECTORY } from "../../../layers/DataDir.ts"
import { onPath, ProviderChecks } from "../ProviderChecks.ts"
import { PROJECT_ROOT } from "./DaemonLaunch.ts"
import {
  describeEnding,
  type MachineLaunch,
  type MachineProvider,
  ProviderFailed,
  type ProviderMachine,
  type ProviderPool
} from "./MachineProvider.ts"

const isMachineId = Schema.is(MachineId)

/** How long a stopped daemon gets to end by itself before it is killed. */
const STOP_GRACE = Duration.seconds(3)
/** How long the killed processes get to be gone before `stop` returns anyway. */
const KILL_WAIT = Duration.seconds(2)

/**
 * The command lines of the live processes of process group `group`, read from /proc (each
 * process's state and group in its `stat`). Zombies are left out: they have ended, and one whose
 * parent is slow to reap it (a sandbox's init reparented to the host's) would otherwise keep the
 * group "running".
 */
const liveMembers = (group: number) =>
  readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return []
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      // After the command name in parentheses: state, parent pid, process group, ...
      const [state, , memberGroup] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (state === "Z" || Number(memberGroup) !== group) return []
      return [readFileSync(`/proc/${entry}/cmdline`, "utf8")]
    } catch {
      return [] // ended while being read
    }
  })

/**
 * Whether the daemon of `machineId`, started as the leader of group `group`, still runs: a live
 * process of the group names the machine (a reused group id does not). The leader itself may be
 * gone while the daemon runs on: bubblewrap's outer process ends at SIGTERM at once.
 */
const daemonRuns = (group: number, machineId: string) => liveMembers(group).some((cmdline) => cmdline.includes(machineId))

/** How much of the end of a daemon's log its ending reads. */
const ENDING_LOG_BYTES = 16 * 1024
/**
 * How long a machine's ending waits for Node to report how its daemon ended: the sweep sees a
 * killed daemon gone as soon as it is a zombie, which a busy event loop reaps a moment later.
 */
const EXIT_REPORT_WAIT = Duration.seconds(2)

/** The last `bytes` of a file; "" when it cannot be read. */
const tailOf = (file: string, bytes: number) => {
  let fd: number | undefined
  try {
    fd = openSync(file, "r")
    const size = fstatSync(fd).size
    const length = Math.min(bytes, size)
    const buffer = Buffer.alloc(length)
    const read = readSync(fd, buffer, 0, length, size - length)
    return buffer.subarray(0, read).toString("utf8")
  } catch {
    return ""
  } finally {
    if (fd !== undefined) closeSync(fd)
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

const signalGroup = (group: number, signal: NodeJS.Signals) =>
  Effect.sync(() => {
    try {
      process.kill(-group, signal)
    } catch {
      // gone already
    }
  })

/** Waits until no live process is left in `group`, at most `limit`. */
const awaitGroupEnd = (group: number, limit: Duration.Duration) =>
  Effect.sync(() => liveMembers(group).length > 0).pipe(
    Effect.repeat({ schedule: Schedule.spaced("50 millis").pipe(Schedule.upTo({ duration: limit })), while: (alive) => alive })
  )

const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const checks = yield* ProviderChecks
  const inMemory = config.dataDir.startsWith("memory://")
  const dataDir = inMemory ? null : resolve(config.dataDir)
  const root = dataDir === null ? join(tmpdir(), "agent-platform-machines") : join(dataDir, MACHINES_DIRECTORY)
  const bwrap = yield* onPath("bwrap")
  if (Option.isSome(config.localProviderKey) && Option.isNone(bwrap)) {
    yield* Effect.logWarning(
      "AGENT_PLATFORM_LOCAL_PROVIDER_KEY is set and bwrap (bubblewrap) is not on the PATH: local pools' machines run " +
        "without a sandbox, as this server's user, with its files in reach; install bubblewrap to sandbox them"
    )
  }

  const machineDir = (poolId: string, machineId: string) => join(root, poolId, machineId)

  /**
   * Ends every process of the daemon's group: SIGTERM, the grace period while any is left, then
   * SIGKILL, and returns once they are gone (so a stopped machine has no process left).
   */
  const stopProcess = (dir: string, machineId: string) =>
    Effect.gen(function*() {
      const group = readPid(dir)
      if (group === null || !daemonRuns(group, machineId)) return
      yield* signalGroup(group, "SIGTERM")
      yield* awaitGroupEnd(group, STOP_GRACE)
      yield* signalGroup(group, "SIGKILL")
      yield* awaitGroupEnd(group, KILL_WAIT)
    })

  /** Stops the machine's daemon and removes its directory. */
  const removeMachine = (dir: string, machineId: string) =>
    Effect.andThen(stopProcess(dir, machineId), Effect.sync(() => rmSync(dir, { recursive: true, force: true })))

  /**
   * With DATA_DIR `memory://`: the directory of each machine started and not stopped, with its
   * id, and the directory of each pool that started one.
   */
  const startedInMemory = new Map<string, string>()
  /**
   * The daemons this process started, by directory, each with how it ended, once Node has reaped
   * it (a daemon started by an earlier process: unknown). Stopping a machine forgets it.
   */
  const exits = new Map<string, Deferred.Deferred<string>>()
  const poolsInMemory = new Set<string>()
  if (inMemory) {
    yield* Effect.addFinalizer(() =>
      Effect.forEach(startedInMemory, ([dir, machineId]) => removeMachine(dir, machineId), { concurrency: "unbounded", discard: true }).pipe(
        // The pools' directories, then the root, once empty (another server's may be in them).
        Effect.andThen(Effect.sync(() => {
          for (const emptied of [...poolsInMemory, root]) {
            try {
              rmdirSync(emptied)
            } catch {
              // not empty, or gone
            }
          }
        }))
      )
    )
  }

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
      if (inMemory) {
        startedInMemory.set(dir, launch.machineId)
        poolsInMemory.add(dirname(dir))
      }
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
          const exited = Deferred.makeUnsafe<string>()
          exits.set(dir, exited)
          child.on("exit", (code, signal) => {
            Deferred.doneUnsafe(exited, Effect.succeed(code !== null ? `exited with code ${code}` : `was killed by ${signal}`))
          })
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
      yield* removeMachine(dir, machineId)
      startedInMemory.delete(dir)
      exits.delete(dir)
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
          running: pid !== null && daemonRuns(pid, machineId)
        }
      })
    })

  const ending = (pool: ProviderPool, machineId: MachineId, _ref: string) =>
    Effect.gen(function*() {
      const dir = machineDir(pool.poolId, machineId)
      const exited = exits.get(dir)
      // The sweep may see the process gone before Node has reaped it and reported how it ended.
      const status = exited === undefined ? Option.none() : yield* Effect.timeoutOption(Deferred.await(exited), EXIT_REPORT_WAIT)
      return describeEnding(
        `its daemon process ${Option.getOrElse(status, () => "ended")}`,
        tailOf(join(dir, "daemon.log"), ENDING_LOG_BYTES)
      )
    })

  // This process's machines live under its root on its host: another process sees them only
  // when it runs on the same host with the same root.
  const location = `local:${hostname()}:${root}`

  const provider: MachineProvider = {
    refusal: (pool) => checks.localRefusal(Redacted.make(pool.authSecret)),
    location: () => location,
    workDirectory: (poolId, machineId) => join(machineDir(poolId, machineId), "work"),
    start,
    stop,
    list,
    ending
  }
  return provider
})

export class LocalProvider extends Context.Service<LocalProvider, Effect.Success<typeof make>>()("LocalProvider") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(ProviderChecks.layer))
}
