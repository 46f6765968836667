/**
 * Machine daemons as real child processes (`node src/daemon/main.ts`, what
 * `npm run daemon` runs) against a server on loopback: the in-process test server (its address
 * from `serverUrl`) or a server process. The token goes through AGENT_PLATFORM_DAEMON_TOKEN.
 */
import { HttpServer } from "effect/http"
import { NetAddress } from "effect/net"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { eventually } from "./Polling.ts"
import type { RuntimeProject } from "./RuntimeProject.ts"

const ROOT = join(import.meta.dirname, "..", "..")

/** The address of the in-process test server. */
export const serverUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address
  if (!NetAddress.isInetAddress(address)) throw new Error("the test server listens on a TCP port")
  return `http://127.0.0.1:${address.port}`
})

export interface DaemonProcess {
  readonly pid: number
  readonly output: () => string
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly stop: () => Promise<unknown>
  readonly kill: () => Promise<unknown>
  /** Stops the process where it is (SIGSTOP): its connection stays open, it answers nothing until resumed. */
  readonly pause: () => void
  /** Lets a paused process go on (SIGCONT). */
  readonly resume: () => void
}

const running = new Set<ChildProcess>()
const directories = new Set<string>()

/** Kills every daemon a test left running, and removes the directories `daemonDirs` made. */
export const killDaemons = () => {
  for (const child of running) child.kill("SIGKILL")
  running.clear()
  for (const root of directories) rmSync(root, { recursive: true, force: true, maxRetries: 3 })
  directories.clear()
}

/** A fresh directory for a daemon to work in (its real path) and a state file beside it; `killDaemons` removes it. */
export const daemonDirs = () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "agent-platform-daemon-")))
  directories.add(root)
  return { root, work: root, state: join(root, ".state.json") }
}

export const startDaemon = (options: {
  readonly server: string
  readonly token: string
  readonly name: string
  /** `--org`: the organization the machine registers into (named at every registration). */
  readonly org?: string
  readonly dirs: ReadonlyArray<string>
  readonly state: string
}): DaemonProcess => {
  const child = spawn(
    process.execPath,
    [
      "src/daemon/main.ts",
      "--server",
      options.server,
      "--name",
      options.name,
      "--state",
      options.state,
      ...(options.org === undefined ? [] : ["--org", options.org]),
      ...options.dirs.flatMap((dir) => ["--dir", dir])
    ],
    { cwd: ROOT, env: { ...process.env, AGENT_PLATFORM_DAEMON_TOKEN: options.token }, stdio: ["ignore", "pipe", "pipe"] }
  )
  running.add(child)
  let output = ""
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      running.delete(child)
      resolve({ code, signal })
    })
  )
  return {
    pid: child.pid!,
    output: () => output,
    exited,
    stop: () => {
      child.kill("SIGTERM")
      return exited
    },
    kill: () => {
      child.kill("SIGKILL")
      return exited
    },
    pause: () => {
      child.kill("SIGSTOP")
    },
    resume: () => {
      child.kill("SIGCONT")
    }
  }
}

/**
 * A real daemon named `name` of the project's organization, serving a fresh directory `work`
 * (under `dirs.root`), its machine online and granted to the project.
 */
export const connectedMachine = (rt: RuntimeProject, name = "worker") =>
  Effect.gen(function*() {
    const token = yield* rt.client.machines.createDaemonToken({ params: { orgID: rt.org.id }, payload: { name: "d" } })
    const dirs = daemonDirs()
    const work = join(dirs.root, "work")
    mkdirSync(work)
    const daemon = startDaemon({ server: yield* serverUrl, token: token.token, name, dirs: [work], state: dirs.state })
    const [machine] = yield* eventually(
      rt.client.machines.list({ params: { orgID: rt.org.id }, query: { status: "online" } }).pipe(Effect.map((page) => page.data)),
      (machines) => machines.length === 1,
      "the daemon online",
      "30 seconds"
    )
    yield* rt.client.machines.createGrant({
      params: { orgID: rt.org.id, machineID: machine.id },
      payload: { target_project_id: rt.project.id }
    })
    return { machine, daemon, work, dirs, token: token.token }
  })
