/**
 * What the framework costs a request: GET /v1/orgs/{orgID} (the key by its hash, the membership,
 * the organization) and GET /healthz, each served in turn by four processes on one Postgres
 * database: the node:http + pg baseline (bench/baselineServer.ts), a minimal server on the Effect 3
 * HttpApi this server was built on until it moved to Effect 4 (bench/frameworks/effect3/), the same
 * minimal server on Effect 4 (bench/frameworks/effect4/), and this server. The minimal servers do the baseline's
 * statements through HttpApi, a bearer security middleware and @effect/sql-pg, with tracing and
 * request logs off; this server does its own (two statements for the GET, docs/performance-record.md).
 * The servers take turns, round after round; each figure is the median of the rounds.
 *
 * Then a durable workflow's round trip through the workflow engine, on each version
 * (bench/frameworks/effect3/workflow.ts, effect4/workflow.ts): workflows a second and the process's
 * CPU per workflow, each run on a fresh database, the versions taking turns for the same rounds.
 *
 * Not in the default run (`npm run bench -- frameworks`): each minimal program has its own packages
 * (Effect 3's in bench/frameworks/effect3, Effect 4's in bench/frameworks/effect4, each with its own
 * package-lock.json), installed there on first use from the npm registry.
 * BENCH_FRAMEWORK_ROUNDS (default 3) sets the rounds.
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import {
  createDatabase,
  type FreshDatabase,
  installPackagesOnce,
  measure,
  type Measurement,
  newToken,
  ROOT,
  startProcess,
  temporaryDataDir
} from "./Harness.ts"
import { median, type RuntimeRow } from "./runtime.ts"

const ROUNDS = Number(process.env.BENCH_FRAMEWORK_ROUNDS ?? 3)
const MINIMAL_PROGRAM_DIRECTORIES = ["bench/frameworks/effect3", "bench/frameworks/effect4"]

const SERVERS = [
  { name: "baseline node:http + pg", entry: "bench/baselineServer.ts" },
  { name: "minimal Effect 3 HttpApi", entry: "bench/frameworks/effect3/server.ts" },
  { name: "minimal Effect 4 HttpApi", entry: "bench/frameworks/effect4/server.ts" },
  { name: "this server", entry: "src/main.ts" }
] as const

const ROUTES = [
  { name: "GET /v1/orgs/{orgID}", path: (orgId: string) => `/v1/orgs/${orgId}` },
  { name: "GET /healthz", path: (_: string) => "/healthz" }
] as const

const WORKFLOWS = [
  { name: "Effect 3", entry: "bench/frameworks/effect3/workflow.ts" },
  { name: "Effect 4", entry: "bench/frameworks/effect4/workflow.ts" }
] as const

interface WorkflowRun {
  readonly workflows: number
  readonly seconds: number
  readonly cpuMicroseconds: number
}

/** This server migrates the database and makes an organization with the bootstrap key: the rows every server reads. */
const createOrganization = async (env: Record<string, string>, token: string): Promise<string> => {
  const server = await startProcess("src/main.ts", env)
  try {
    const created = await fetch(`${server.baseUrl}/v1/orgs`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Bench" })
    })
    if (created.status !== 201) throw new Error(`creating the organization answered ${created.status}`)
    return ((await created.json()) as { id: string }).id
  } finally {
    await server.stop()
  }
}

/** One run of a workflow program, on a database of its own. */
const runWorkflows = async (entry: string): Promise<WorkflowRun> => {
  const database = await createDatabase()
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [entry], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: database.url }
    })
    return JSON.parse(stdout.trim().split("\n").at(-1)!) as WorkflowRun
  } finally {
    await database.drop()
  }
}

const workflowRows = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  const runs = new Map<string, Array<WorkflowRun>>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const version of WORKFLOWS) {
      runs.set(version.name, [...(runs.get(version.name) ?? []), await runWorkflows(version.entry)])
    }
  }
  return WORKFLOWS.flatMap((version) => {
    const measured = runs.get(version.name)!
    const name = `a durable workflow's round trip, ${version.name}`
    return [
      { name: `${name}: workflows per second`, value: median(measured.map((run) => run.workflows / run.seconds)), unit: "workflows/s" },
      { name: `${name}: CPU per workflow`, value: median(measured.map((run) => run.cpuMicroseconds / run.workflows)), unit: "µs" }
    ]
  })
}

export const frameworks = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  MINIMAL_PROGRAM_DIRECTORIES.forEach(installPackagesOnce)
  let database: FreshDatabase
  try {
    database = await createDatabase()
  } catch (error) {
    return [{ name: `skipped: Postgres not reachable (${error instanceof Error ? error.message : String(error)})`, value: 0, unit: "" }]
  }
  const dataDir = temporaryDataDir()
  try {
    const token = newToken()
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir.dir, AGENT_PLATFORM_BOOTSTRAP_TOKEN: token }
    const orgId = await createOrganization(env, token)
    const headers = { authorization: `Bearer ${token}` }
    const samples = new Map<string, Array<Measurement>>()
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of SERVERS) {
        const started = await startProcess(server.entry, env)
        try {
          for (const route of ROUTES) {
            const key = `${route.name}, ${server.name}`
            samples.set(key, [...(samples.get(key) ?? []), await measure(started.baseUrl + route.path(orgId), headers, started)])
          }
        } finally {
          await started.stop()
        }
      }
    }
    const requestRows = ROUTES.flatMap((route) => {
      const requestsPerSecond = (server: string) => median(samples.get(`${route.name}, ${server}`)!.map((sample) => sample.requestsPerSecond))
      const baseline = requestsPerSecond(SERVERS[0].name)
      return SERVERS.flatMap((server) => {
        const key = `${route.name}, ${server.name}`
        const cpu = median(samples.get(key)!.map((sample) => sample.cpuMicrosecondsPerRequest!))
        return [
          { name: `${key}: requests per second`, value: requestsPerSecond(server.name), unit: "req/s" },
          { name: `${key}: of the baseline's requests per second`, value: (100 * requestsPerSecond(server.name)) / baseline, unit: "%" },
          { name: `${key}: server CPU per request`, value: cpu, unit: "µs" }
        ]
      })
    })
    return [...requestRows, ...(await workflowRows())]
  } finally {
    dataDir.remove()
    await database.drop()
  }
}
