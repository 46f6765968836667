/**
 * Authenticated GET /v1/orgs/{orgID}: the server on the embedded PGlite, the server on Postgres
 * (a fresh database, dropped afterwards), and the plain node:http + pg baseline on that same
 * Postgres database. Each server runs as its own process; the load generator runs in this one.
 * Beside requests a second, each row has the server's CPU time a request: on a 2-core machine the
 * load generator can set the pace for the faster servers, and then only requests per CPU second
 * compare them (the embedded server's CPU includes its database's, which runs in its process).
 */
import {
  type Benchmark,
  createDatabase,
  type FreshDatabase,
  measure,
  type Measurement,
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
    return { token, orgId: org.id, ...(await measure(`${server.baseUrl}/v1/orgs/${org.id}`, headers, server)) }
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

const pick = ({ cpuMicrosecondsPerRequest, p99Ms, requestsPerSecond }: Measurement) => ({
  requestsPerSecond,
  p99Ms,
  cpuMicrosecondsPerRequest
})

export const orgGet: Benchmark = async () => {
  const rows: Array<Row> = []

  const dataDir = temporaryDataDir()
  let embedded: Measurement
  try {
    embedded = await measureServer({ DATA_DIR: dataDir.dir })
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
        measure(`${baseline.baseUrl}/v1/orgs/${onPostgres.orgId}`, { authorization: `Bearer ${onPostgres.token}` }, baseline)
    )
    const ratios = (measured: Measurement) => ({
      ratio: measured.requestsPerSecond / baseline.requestsPerSecond,
      cpuRatio: baseline.cpuMicrosecondsPerRequest! / measured.cpuMicrosecondsPerRequest!
    })
    rows[0] = { ...rows[0], ...ratios(embedded) }
    rows.push({ benchmark: BENCHMARK, target: "server, Postgres", ...pick(onPostgres), ...ratios(onPostgres) })
    rows.push({ benchmark: BENCHMARK, target: "baseline node:http + pg", ...pick(baseline), ...ratios(baseline) })
  } finally {
    postgresDataDir.remove()
    await database.drop()
  }
  return rows
}

