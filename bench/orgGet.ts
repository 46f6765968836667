/**
 * Authenticated GET /v1/orgs/{orgID}: the server on the embedded PGlite, the server on Postgres
 * (a fresh database, dropped afterwards), and the plain node:http + pg baseline on that same
 * Postgres database. Each server runs as its own process; the load generator runs in this one.
 */
import {
  type Benchmark,
  createDatabase,
  type FreshDatabase,
  measure,
  newToken,
  type Process,
  type Row,
  startProcess,
  temporaryDataDir
} from "./Harness.ts"

const BENCHMARK = "GET /v1/orgs/{orgID}"

/** Starts our server, makes an organization with the bootstrap key, and measures GET on it. */
const measureServer = async (env: Record<string, string>) => {
  const token = newToken()
  const server = await startProcess("src/main.ts", { ...env, AGENT_PLATFORM_BOOTSTRAP_TOKEN: token })
  try {
    const headers = { authorization: `Bearer ${token}` }
    const created = await fetch(`${server.baseUrl}/v1/orgs`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "Bench" })
    })
    if (created.status !== 201) throw new Error(`creating the organization answered ${created.status}`)
    const org = await created.json() as { id: string }
    return { token, orgId: org.id, ...(await measure(`${server.baseUrl}/v1/orgs/${org.id}`, headers)) }
  } finally {
    await server.stop()
  }
}

const withStopped = async <A>(start: () => Promise<Process>, use: (started: Process) => Promise<A>) => {
  const started = await start()
  try {
    return await use(started)
  } finally {
    await started.stop()
  }
}

const pick = ({ requestsPerSecond, p99Ms }: { requestsPerSecond: number; p99Ms: number }) => ({
  requestsPerSecond,
  p99Ms
})

export const orgGet: Benchmark = async () => {
  const rows: Array<Row> = []

  const dataDir = temporaryDataDir()
  try {
    const embedded = await measureServer({ DATA_DIR: dataDir.dir })
    rows.push({ benchmark: BENCHMARK, target: "server, embedded PGlite", ...pick(embedded) })
  } finally {
    dataDir.remove()
  }

  let database: FreshDatabase
  try {
    database = await createDatabase()
  } catch (error) {
    const note = `skipped: Postgres not reachable (${error instanceof Error ? error.message : String(error)})`
    rows.push({ benchmark: BENCHMARK, target: "server, Postgres", note })
    rows.push({ benchmark: BENCHMARK, target: "baseline node:http + pg", note })
    return rows
  }
  const postgresDataDir = temporaryDataDir()
  try {
    const onPostgres = await measureServer({ DATABASE_URL: database.url, DATA_DIR: postgresDataDir.dir })
    // The server left its organization, user and key in the database: the baseline reads the same rows.
    const baseline = await withStopped(
      () => startProcess("bench/baselineServer.ts", { DATABASE_URL: database.url }),
      (baseline) =>
        measure(`${baseline.baseUrl}/v1/orgs/${onPostgres.orgId}`, { authorization: `Bearer ${onPostgres.token}` })
    )
    const ratio = (requestsPerSecond: number) => requestsPerSecond / baseline.requestsPerSecond
    rows[0] = { ...rows[0], ratio: ratio(rows[0].requestsPerSecond!) }
    rows.push({ benchmark: BENCHMARK, target: "server, Postgres", ...pick(onPostgres), ratio: ratio(onPostgres.requestsPerSecond) })
    rows.push({ benchmark: BENCHMARK, target: "baseline node:http + pg", ...pick(baseline), ratio: 1 })
  } finally {
    postgresDataDir.remove()
    await database.drop()
  }
  return rows
}

