/**
 * Starts the LangGraph.js Agent Server as `langgraph dev` runs it (the CLI of
 * @langchain/langgraph-cli, in-memory), for bench/competitors.ts:
 *
 *   node server.mjs   (cwd: this directory; env PORT, MODEL_BASE_URL, MODEL_API_KEY, DATA_DIR)
 *
 * It spawns `langgraphjs dev` on 127.0.0.1:$PORT with no browser, no reload (no file watching),
 * no tunnel, no CLI analytics and no LangSmith tracing. The dev command itself spawns the server
 * through the tsx CLI, so the process tree is:
 *
 *   node server.mjs                     (this file: waits, forwards signals)
 *   └─ node langgraph-cli dev           (the CLI: reads langgraph.json, spawns the server)
 *      └─ node tsx cli                  (tsx: starts the server with its loader, relays signals)
 *         └─ node langgraph-api entry   (the API server: HTTP, the run queue, the graphs)
 *
 * (the server also starts an esbuild service process for tsx). All of them are descendants of this
 * process, in a process group of their own. On SIGTERM, SIGINT or SIGHUP this process sends SIGTERM
 * to the CLI, which ends the tsx process, which relays it to the server; the server flushes its
 * state to disk (for at most 3 s) and exits. This process waits until every process of the group
 * has ended (SIGKILL to the group after 10 s), then exits. Only the CLI is signalled: the server
 * takes one SIGTERM gracefully (exit-hook) and a second one would kill it mid-flush. When the CLI
 * ends on its own, this process sends SIGTERM to what is left of its group, waits the same way and
 * exits with the CLI's code.
 *
 * The dev server keeps threads, runs and checkpoints in memory and writes them as JSON files into
 * `.langgraph_api` beside langgraph.json (3 s after the last change, and on exit), and reads them
 * back on start. So that each run starts empty and nothing is written here, with DATA_DIR set the
 * CLI is given a copy of langgraph.json in $DATA_DIR/langgraph whose graph paths point back here:
 * the state then lives in $DATA_DIR/langgraph/.langgraph_api.
 *
 * Runs: the server executes runs on `--n-jobs-per-worker` in-process queue loops (default 10),
 * each one run at a time; a turn beyond that many waits in the queue. 100 here, so that 100
 * threads can run at once (LANGGRAPH_JOBS overrides it).
 */
import { spawn } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const HERE = dirname(fileURLToPath(import.meta.url))
const PORT = process.env.PORT
if (PORT === undefined || !/^\d+$/.test(PORT)) throw new Error("PORT must be set to a port number")
const JOBS = process.env.LANGGRAPH_JOBS ?? "100"
const STOP_TIMEOUT_MS = 10_000

/** The langgraph.json the CLI is to read: this directory's, or its copy in DATA_DIR. */
const configPath = () => {
  const own = join(HERE, "langgraph.json")
  const dataDir = process.env.DATA_DIR
  if (dataDir === undefined || dataDir === "") return own
  const project = resolve(dataDir, "langgraph")
  mkdirSync(project, { recursive: true })
  const config = JSON.parse(readFileSync(own, "utf8"))
  const pointedHere = (spec) => {
    const [file, symbol] = spec.split(":")
    return `${relative(project, resolve(HERE, file))}:${symbol}`
  }
  config.graphs = Object.fromEntries(
    Object.entries(config.graphs).map(([id, spec]) => [
      id,
      typeof spec === "string" ? pointedHere(spec) : { ...spec, path: pointedHere(spec.path) }
    ])
  )
  const path = join(project, "langgraph.json")
  writeFileSync(path, JSON.stringify(config, null, 2))
  // The CLI appends `.langgraph_api` to the project's .gitignore when it is not there yet.
  writeFileSync(join(project, ".gitignore"), ".langgraph_api\n")
  return path
}

const env = { ...process.env }
for (const key of ["LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT"]) delete env[key]
Object.assign(env, {
  // The CLI posts a usage record to its analytics endpoint unless this is set.
  LANGGRAPH_CLI_NO_ANALYTICS: "1",
  BROWSER: "none",
  LANGSMITH_TRACING: "false",
  LANGSMITH_TRACING_V2: "false",
  LANGCHAIN_TRACING: "false",
  LANGCHAIN_TRACING_V2: "false"
})

const cli = fileURLToPath(import.meta.resolve("@langchain/langgraph-cli/dist/cli/cli.mjs"))
const child = spawn(
  process.execPath,
  [
    cli,
    "dev",
    "--config",
    configPath(),
    "--host",
    "127.0.0.1",
    "--port",
    PORT,
    "--no-browser",
    "--no-reload",
    "--n-jobs-per-worker",
    JOBS
  ],
  { cwd: HERE, env, stdio: "inherit", detached: true }
)
const group = child.pid

/** Whether any process of the child's group is still there. */
const groupAlive = () => {
  try {
    process.kill(-group, 0)
    return true
  } catch {
    return false
  }
}

const signalGroup = (signal) => {
  try {
    process.kill(-group, signal)
  } catch {
    // The group has ended already.
  }
}

let stopping = false
const stop = async (code) => {
  if (stopping) return
  stopping = true
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
  else signalGroup("SIGTERM")
  const deadline = Date.now() + STOP_TIMEOUT_MS
  while (groupAlive() && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50))
  if (groupAlive()) signalGroup("SIGKILL")
  process.exit(code)
}

for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => void stop(0))
child.on("exit", (code, signal) => void stop(code ?? (signal === null ? 0 : 1)))
child.on("error", (error) => {
  console.error(error)
  void stop(1)
})
