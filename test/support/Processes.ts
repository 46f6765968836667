/**
 * The server and the CLI as real processes (`npm start`, `node src/cli.ts`), for
 * what only a process shows: signals, restarts, the data directory lock. The database is the
 * one the test run uses: the Postgres at DATABASE_URL when set, else the embedded one in a
 * temporary DATA_DIR.
 */
import { PGlite } from "@electric-sql/pglite"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { type Client, makeClient } from "../../src/api/Client.ts"

const ROOT = join(import.meta.dirname, "..", "..")

/**
 * How long a process may take to start (PGlite initialising a fresh directory, migrations).
 * A fresh embedded database alone takes about 12 s on a slow 2-core machine, and the start-up
 * tests start six at once beside the other test files: 60 s was seen to run out there.
 */
export const START_TIMEOUT_MS = 120_000

export const usesEmbeddedDatabase = process.env.DATABASE_URL === undefined

const makeEmptyDir = () => mkdtempSync(join(tmpdir(), "agent-platform-e2e-"))

/**
 * A data directory holding a freshly initialised (not migrated) embedded database, to copy:
 * initialising one takes seconds, copying it milliseconds.
 */
export const makeTemplateDataDir = async () => {
  const dir = makeEmptyDir()
  if (usesEmbeddedDatabase) await (await PGlite.create(join(dir, "pg"))).close()
  return dir
}

/** A new data directory, with a copy of the template's database. */
export const makeDataDir = (template: string) => {
  const dir = makeEmptyDir()
  cpSync(template, dir, { recursive: true })
  return dir
}

export const removeDataDir = (dir: string) => rmSync(dir, { recursive: true, force: true })

/**
 * The secret key of every process on the test run's Postgres, which outlives their data
 * directories (each embedded database keeps its key in its own data directory).
 */
const POSTGRES_SECRET_KEY = randomBytes(32).toString("base64")

/** The configuration of a process: the test run's database, on `dataDir` when embedded; a runner on any free port. */
const processEnv = (dataDir: string, env: Record<string, string>): NodeJS.ProcessEnv => {
  const { DATABASE_URL: _, AGENT_PLATFORM_BOOTSTRAP_TOKEN: __, ...inherited } = process.env
  return {
    ...inherited,
    ...(usesEmbeddedDatabase
      ? {}
      : { DATABASE_URL: process.env.DATABASE_URL, AGENT_PLATFORM_SECRET_KEY: POSTGRES_SECRET_KEY }),
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    // Any free port for the cluster runner (on Postgres): its default, PORT + 1, may be taken by
    // then, as a source port of another process's connection (a CI run failed so).
    RUNNER_PORT: "0",
    ...env
  }
}

/** A loopback port free right now (a server restarted on it keeps its address for its daemons). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => typeof address === "object" && address !== null ? resolve(address.port) : reject())
    })
  })

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface ServerProcess {
  readonly baseUrl: string
  readonly port: number
  /** Everything written to stdout and stderr so far. */
  readonly output: () => string
  readonly exited: Promise<Exit>
  /** Sends SIGTERM and resolves with the exit. */
  readonly stop: () => Promise<Exit>
  /** Sends SIGINT to the whole process group (npm and the server), as a terminal's Ctrl-C does, and resolves with the exit. */
  readonly interrupt: () => Promise<Exit>
  /** Kills the whole process group with SIGKILL (a crash) and resolves with the exit. */
  readonly kill: () => Promise<Exit>
}

const collectOutput = (child: ChildProcess) => {
  let output = ""
  child.stdout?.on("data", (chunk) => (output += chunk))
  child.stderr?.on("data", (chunk) => (output += chunk))
  return () => output
}

/**
 * How `child` exited, once what it wrote has been read: at its `close` (its output read to the
 * end), or 5 s after its `exit` when a process it started still holds that output open. `exit`
 * alone can come before the last of the output is read (a busy machine's CI lost a server's
 * shutdown lines that way).
 */
const exitOf = (child: ChildProcess) =>
  new Promise<Exit>((resolve) =>
    child.once("exit", (code, signal) => {
      const timer = setTimeout(() => resolve({ code, signal }), 5_000)
      child.once("close", () => {
        clearTimeout(timer)
        resolve({ code, signal })
      })
    })
  )

/** How to kill each server's process group (npm and the server under it). */
const leftovers = new Set<() => void>()

/** Kills what a failed test left running, even a server whose npm has exited. */
export const killLeftoverServers = () => {
  for (const kill of leftovers) {
    try {
      kill()
    } catch {
      // Already gone.
    }
  }
  leftovers.clear()
}

/** A server that exited because the free port it was given had been taken by the time it listened. */
class PortTaken extends Error {}

/** How many free ports a start tries: another process may take one between its pick and the server's listen. */
const PORT_ATTEMPTS = 3

/**
 * Starts the server on `dataDir` as a user does, with `npm start` (so signals go through npm as
 * they do in production), and resolves once it listens, on the caller's PORT if given (its
 * `port` and `baseUrl` then name that one). On a port of its own picking it starts
 * again on another when the one it picked was taken meanwhile (the server says so and exits):
 * the pick and the server's listen are seconds apart, and other processes' connections take
 * source ports from the same range.
 */
export const startServer = async (dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> => {
  if (env.PORT !== undefined) return startServerOn(Number(env.PORT), dataDir, env)
  for (let attempt = 1;; attempt++) {
    try {
      return await startServerOn(await freePort(), dataDir, env)
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === PORT_ATTEMPTS) throw error
    }
  }
}

const startServerOn = async (port: number, dataDir: string, env: Record<string, string>): Promise<ServerProcess> => {
  const child = spawn("npm", ["start", "--silent"], {
    cwd: ROOT,
    env: processEnv(dataDir, { ...env, PORT: String(port) }),
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, so that what is left of it can be killed whole (killLeftoverServers).
    detached: true
  })
  const killGroup = () => process.kill(-child.pid!, "SIGKILL")
  const output = collectOutput(child)
  const exited = exitOf(child)
  leftovers.add(killGroup)
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup()
      reject(new Error(`the server did not start within ${START_TIMEOUT_MS} ms:\n${output()}`))
    }, START_TIMEOUT_MS)
    child.stdout!.on("data", () => {
      if (output().includes("Listening on")) {
        clearTimeout(timer)
        resolve()
      }
    })
    void exited.then((exit) => {
      clearTimeout(timer)
      const message = `the server exited (${exit.code ?? exit.signal}) before listening:\n${output()}`
      reject(output().includes(`port ${port} is in use`) ? new PortTaken(message) : new Error(message))
    })
  })
  await listening
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    output,
    exited,
    stop: () => {
      child.kill("SIGTERM")
      return exited
    },
    interrupt: () => {
      process.kill(-child.pid!, "SIGINT")
      return exited
    },
    kill: () => {
      killGroup()
      return exited
    }
  }
}

/** `npm run cli -- ...args` on `dataDir` (run with node directly: npm adds its own warnings to stderr). */
export const runCli = async (args: ReadonlyArray<string>, dataDir: string, env: Record<string, string> = {}) => {
  const child = spawn(process.execPath, ["src/cli.ts", ...args], {
    cwd: ROOT,
    env: processEnv(dataDir, env),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const timer = setTimeout(() => child.kill("SIGKILL"), START_TIMEOUT_MS)
  const exit = await exitOf(child)
  clearTimeout(timer)
  return { ...exit, stdout, stderr }
}

/** Runs `f` with the typed client of the server at `baseUrl`, sending `token`. */
export const withClient = <A, E>(
  baseUrl: string,
  token: string | undefined,
  f: (client: Client) => Effect.Effect<A, E>
): Promise<A> =>
  Effect.runPromise(
    makeClient(token === undefined ? { baseUrl } : { baseUrl, token }).pipe(
      Effect.flatMap(f),
      Effect.provide(NodeHttpClient.layerUndici)
    )
  )

/** The failure of `f` (a test failure when it succeeds). */
export const failureOf = <A, E>(baseUrl: string, token: string | undefined, f: (client: Client) => Effect.Effect<A, E>) =>
  withClient(baseUrl, token, (client) => Effect.flip(f(client)))
