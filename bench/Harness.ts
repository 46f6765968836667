/**
 * What the benchmarks share: the row every benchmark returns, the load generator, the server
 * as a child process (as in production: NODE_ENV=production, its log lines written to
 * /dev/null), and fresh Postgres databases.
 */
import autocannon from "autocannon"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { connect, createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import pg from "pg"

/** One line of the table. A row without figures says in `note` why it was skipped. */
export interface Row {
  readonly benchmark: string
  readonly target: string
  readonly requestsPerSecond?: number
  readonly p99Ms?: number
  /** requestsPerSecond relative to the baseline of the same benchmark. */
  readonly ratio?: number
  /** The server's CPU time a request (user + system, its own process), when measured. */
  readonly cpuMicrosecondsPerRequest?: number
  /**
   * Requests a second of CPU relative to the baseline (the baseline's CPU a request over this
   * target's): unlike `ratio`, it holds when the load generator, not the server, sets the pace.
   */
  readonly cpuRatio?: number
  readonly note?: string
}

/** A benchmark: runs, cleans up after itself, returns its rows. */
export type Benchmark = () => Promise<ReadonlyArray<Row>>

export const ROOT = join(import.meta.dirname, "..")

export const CONNECTIONS = 32
export const DURATION_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 10)
const WARM_UP_SECONDS = 2

export interface Measurement {
  readonly requestsPerSecond: number
  readonly p99Ms: number
  /** The server's CPU time a request over the measured window, when its process was given. */
  readonly cpuMicrosecondsPerRequest?: number
}

/**
 * GET `url` with CONNECTIONS connections for DURATION_SECONDS, after a short warm-up (JIT, pool).
 * Any non-2xx answer or socket error fails the measurement: a fast wrong answer is not a result.
 */
export const measure = async (
  url: string,
  headers: Record<string, string>,
  server?: Pick<Process, "cpuMilliseconds">
): Promise<Measurement> => {
  await autocannon({ url, headers, connections: CONNECTIONS, duration: WARM_UP_SECONDS })
  const cpuBefore = server?.cpuMilliseconds()
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_SECONDS })
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(
      `${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`
    )
  }
  const measured = { requestsPerSecond: Math.round(result.requests.average), p99Ms: result.latency.p99 }
  return server === undefined || cpuBefore === undefined
    ? measured
    : { ...measured, cpuMicrosecondsPerRequest: (1000 * (server.cpuMilliseconds() - cpuBefore)) / result.requests.total }
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => typeof address === "object" && address !== null ? resolve(address.port) : reject())
    })
  })

export const newToken = () => `bench-${randomBytes(16).toString("hex")}`

export interface Process {
  readonly baseUrl: string
  /** The CPU time (user + system) the process has used so far, in milliseconds (Linux /proc); with its descendants' when started so. */
  readonly cpuMilliseconds: () => number
  /** SIGTERM, and wait for the exit. */
  readonly stop: () => Promise<void>
}

/** Linux reports a process's CPU time in clock ticks of 1/100 s (USER_HZ). */
const MILLISECONDS_PER_TICK = 10

/** The fields of a /proc/<pid>/stat line after the command name (which may hold spaces): the state (field 3) first. */
const fieldsAfterName = (stat: string) => stat.slice(stat.lastIndexOf(")") + 2).split(" ")

/** utime + stime of a /proc/<pid>/stat line (fields 14 and 15). */
const cpuMillisecondsIn = (stat: string): number => {
  const fields = fieldsAfterName(stat)
  return (Number(fields[11]) + Number(fields[12])) * MILLISECONDS_PER_TICK
}

/** cutime + cstime of a /proc/<pid>/stat line (fields 16 and 17): what its children that ended used. */
const endedChildrenCpuMillisecondsIn = (stat: string): number => {
  const fields = fieldsAfterName(stat)
  return (Number(fields[13]) + Number(fields[14])) * MILLISECONDS_PER_TICK
}

const cpuMillisecondsOf = (pid: number): number => cpuMillisecondsIn(readFileSync(`/proc/${pid}/stat`, "utf8"))

/** The /proc/<pid>/stat line of every process of this machine, by pid (a process that ends meanwhile is left out). */
const processStats = (): Map<number, string> => {
  const stats = new Map<number, string>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      stats.set(Number(entry), readFileSync(`/proc/${entry}/stat`, "utf8"))
    } catch {
      continue // The process ended meanwhile.
    }
  }
  return stats
}

/** The CPU time of `pid` and of every process descending from it, those that ended included. */
export const cpuMillisecondsOfTree = (pid: number): number => {
  const stats = processStats()
  const children = new Map<number, Array<number>>()
  for (const [child, stat] of stats) {
    const parent = Number(fieldsAfterName(stat)[1])
    children.set(parent, [...(children.get(parent) ?? []), child])
  }
  let total = 0
  for (const pending = [pid]; pending.length > 0;) {
    const next = pending.pop()!
    const stat = stats.get(next)
    if (stat === undefined) continue
    total += cpuMillisecondsIn(stat) + endedChildrenCpuMillisecondsIn(stat)
    pending.push(...(children.get(next) ?? []))
  }
  return total
}

/** This process's CPU time so far (user and system), in milliseconds: the benchmark's own clients and servers. */
export const ownCpuMilliseconds = (): number => {
  const { system, user } = process.cpuUsage()
  return (user + system) / 1000
}

/**
 * The CPU time all Postgres processes of this machine have used so far, in milliseconds (its
 * backends, and its checkpointer, WAL writer and autovacuum, which a turn's writes cost too), or
 * undefined when none runs here (a Postgres server on another machine). Meaningful only as the
 * difference over a run that is the machine's only Postgres work.
 */
export const postgresCpuMilliseconds = (): number | undefined => {
  let total: number | undefined
  for (const stat of processStats().values()) {
    if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) === "postgres") total = (total ?? 0) + cpuMillisecondsIn(stat)
  }
  return total
}

/**
 * The V8 flags `npm start` gives the server (package.json's `start`; docs/operations.md), given to
 * every process started here, the baseline's too, so that each runs as the server does.
 */
/**
 * The node options the checkout at `root` starts its server with: those between `node` and the
 * entry in its package.json's `start` script (`exec node <options> src/main.ts`). A benchmark's
 * server runs as `npm start` runs it, in this checkout and in another revision's (`ab`): an older
 * one loaded its TypeScript through tsx (`--import tsx`), this one through Node's type stripping.
 */
const startOptions = (root: string): ReadonlyArray<string> => {
  const { scripts } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: { start: string } }
  const words = scripts.start.trim().split(/\s+/)
  return words.slice(words.indexOf("node") + 1, -1)
}

/** The rate of a key in a benchmark's servers: a million requests a second. */
const BENCH_KEY_REQUESTS_PER_SECOND = 1_000_000

/** The event streams a key of a benchmark's servers may hold open at once. */
const BENCH_KEY_STREAMS = 100_000

/**
 * Runs `node <the checkout's start options> <entry>` on a free port and waits until GET /healthz answers 200.
 * Standard output (the log) goes to /dev/null; standard error is kept for the failure message.
 * `preloads`: more modules for node to `--import` before the entry (they may be TypeScript).
 * `root`: the checkout the entry is run from (another revision's, for `npm run bench -- ab`).
 */
export const startProcess = async (
  entry: string,
  env: Record<string, string | undefined>,
  preloads: ReadonlyArray<string> = [],
  root = ROOT
): Promise<Process> => {
  const { DATABASE_URL: _, AGENT_PLATFORM_BOOTSTRAP_TOKEN: __, ...inherited } = process.env
  // BENCH_CPU_PROF_DIR: the server writes a V8 CPU profile there when it exits (docs/performance.md).
  const profile = process.env.BENCH_CPU_PROF_DIR === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
  // BENCH_ALLOCATION_PROF_DIR: the server writes a sampled allocation profile there when it exits;
  // BENCH_PGLITE_TIMES_DIR: the embedded database's time by statement.
  const measuring = [
    ...(process.env.BENCH_ALLOCATION_PROF_DIR === undefined ? [] : ["bench/allocationProfile.ts"]),
    ...(process.env.BENCH_PGLITE_TIMES_DIR === undefined ? [] : ["bench/pgliteStatementTimes.ts"])
  ]
  const modules = [...preloads, ...measuring.map((module) => pathToFileURL(join(ROOT, module)).href)]
  return startServer({
    args: [...startOptions(root), ...profile, ...modules.flatMap((module) => ["--import", module]), entry],
    cwd: root,
    // RUNNER_PORT: any free port for the cluster runner (on Postgres); its default, PORT + 1, may
    // be taken by then, as a source port of another connection (a benchmark run failed so).
    // AGENT_PLATFORM_RATE_LIMIT_PER_SECOND: far above what a benchmark's one key sends, so that
    // each request pays for the key's rate check (measured) and none is refused; so is
    // AGENT_PLATFORM_MAX_STREAMS_PER_KEY (the fan-out's 1,000 watchers, and those of the case
    // before it still closing).
    env: (port) => ({
      ...inherited,
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: String(port),
      RUNNER_PORT: "0",
      AGENT_PLATFORM_RATE_LIMIT_PER_SECOND: String(BENCH_KEY_REQUESTS_PER_SECOND),
      AGENT_PLATFORM_MAX_STREAMS_PER_KEY: String(BENCH_KEY_STREAMS),
      ...env
    }),
    readyPath: "/healthz",
    countDescendants: false
  })
}

export interface ServerCommand {
  /** Node's arguments: its flags, then the entry. */
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** The environment, given the free port the server is to listen on. */
  readonly env: (port: number) => Record<string, string | undefined>
  /** A path that answers 2xx once the server is ready. */
  readonly readyPath: string
  /** Whether `cpuMilliseconds` counts the processes the server starts (workers, children) too. */
  readonly countDescendants: boolean
}

/** Runs `node <args>` and waits until `readyPath` answers on the port it was given. */
export const startServer = async (command: ServerCommand): Promise<Process> => {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, command.args, {
    cwd: command.cwd,
    env: command.env(port),
    stdio: ["ignore", "ignore", "pipe"]
  })
  const entry = command.args.at(-1)
  let stderr = ""
  child.stderr!.on("data", (chunk) => (stderr += chunk))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const baseUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 120_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} exited before answering:\n${stderr}`)
    if (Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`${entry} did not answer within 120 s:\n${stderr}`)
    }
    // A request sent while the server is still wiring its routes may never be answered: give up on it.
    const ready = await fetch(`${baseUrl}${command.readyPath}`, { signal: AbortSignal.timeout(2_000) })
      .then((response) => response.ok, () => false)
    if (ready) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    baseUrl,
    cpuMilliseconds: () => command.countDescendants ? cpuMillisecondsOfTree(child.pid!) : cpuMillisecondsOf(child.pid!),
    stop: () => {
      child.kill("SIGTERM")
      return exited
    }
  }
}

/**
 * Installs the packages of a benchmark's own directory (its package.json and package-lock.json,
 * from the repository's root) with `npm ci`, unless they are installed already.
 */
export const installPackagesOnce = (directory: string) => {
  if (existsSync(join(ROOT, directory, "node_modules"))) return
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: join(ROOT, directory), stdio: "inherit" })
}

/** A temporary DATA_DIR, removed by `remove`. */
export const temporaryDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-platform-bench-"))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** The Postgres server to create benchmark databases on: DATABASE_URL's, else the local one. */
const POSTGRES_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

export interface FreshDatabase {
  readonly url: string
  readonly drop: () => Promise<void>
}

/** A new, empty database on the Postgres server; fails when the server is not reachable. */
export const createDatabase = async (): Promise<FreshDatabase> => {
  const name = `bench_${randomBytes(6).toString("hex")}`
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    }
  }
}

export interface PostgresRelay {
  /** `url` with the relay's host and port: a server given it reaches Postgres through the relay. */
  readonly url: string
  readonly close: () => Promise<void>
}

/**
 * A TCP relay in this process to the Postgres server of the database at `url`. Each statement's
 * round trip takes a little longer through it (two more hops on loopback), as it does with a
 * Postgres on another machine; `observe`, when given, makes a reader of what each client
 * connection sends (the statements benchmark counts its statements). Both of its sockets send
 * at once (no Nagle delay), as Postgres's and the driver's own do: with the delay, an answer
 * of more than a segment waited for the acknowledgement of the segment before its last.
 */
export const startPostgresRelay = async (url: string, observe?: () => (chunk: Buffer) => void): Promise<PostgresRelay> => {
  const target = new URL(url)
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect({ port: Number(target.port || 5432), host: target.hostname, noDelay: true })
    client.setNoDelay(true)
    sockets.add(client).add(upstream)
    const read = observe?.()
    client.on("data", (chunk) => {
      read?.(chunk)
      upstream.write(chunk)
    })
    upstream.pipe(client)
    const close = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on("close", close).on("error", close)
    upstream.on("close", close).on("error", close)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const relayed = new URL(url)
  relayed.hostname = "127.0.0.1"
  relayed.port = String(typeof address === "object" && address !== null ? address.port : 0)
  return {
    url: relayed.toString(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

const formatNumber = (value: number | undefined, digits = 0) =>
  value === undefined ? "" : value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** The rows as an aligned text table. */
export const formatTable = (rows: ReadonlyArray<Row>): string => {
  const header = ["benchmark", "target", "req/s", "p99 ms", "vs baseline", "CPU µs/req", "CPU vs baseline", "note"]
  const cells = rows.map((row) => [
    row.benchmark,
    row.target,
    formatNumber(row.requestsPerSecond),
    formatNumber(row.p99Ms),
    row.ratio === undefined ? "" : `${formatNumber(row.ratio, 2)}x`,
    formatNumber(row.cpuMicrosecondsPerRequest),
    row.cpuRatio === undefined ? "" : `${formatNumber(row.cpuRatio, 2)}x`,
    row.note ?? ""
  ])
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((line) => line[column].length)))
  const numeric = new Set([2, 3, 4, 5, 6])
  const line = (values: ReadonlyArray<string>) =>
    values.map((value, column) => numeric.has(column) ? value.padStart(widths[column]) : value.padEnd(widths[column]))
      .join("  ").trimEnd()
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...cells.map(line)].join("\n")
}
