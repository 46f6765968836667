/**
 * Authenticated GET /v1/orgs/{orgID}: the server on the embedded PGlite, the server on Postgres
 * (a fresh database, dropped afterwards), and the plain node:http + pg baseline on that same
 * Postgres database. Each server runs as its own process; the load generator runs in this one.
 * Beside requests a second, each row has the server's CPU time a request: on a 2-core machine the
 * load generator can set the pace for the faster servers, and then only requests per CPU second
 * compare them (the embedded server's CPU includes its database's, which runs in its process).
 * The server on Postgres and the baseline are measured in alternate rounds (ROUNDS).
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

/**
 * Rounds in which the server on Postgres and the baseline are measured one after the other: a
 * shared machine's speed drifts within minutes, so each round compares the two at about the same
 * moment, and the rows give each figure's median over the rounds.
 */
const ROUNDS = 3

interface Organization {
  readonly url: string
  readonly headers: Record<string, string>
}

/** Starts our server with `env`, makes an organization with the bootstrap key, and runs `use` with its GET. */
const withOrganization = async <A>(env: Record<string, string>, use: (server: Process, organization: Organization) => Promise<A>) => {
  const token = newToken()
  return withStopped(() => startProcess("src/main.ts", { ...env, AGENT_PLATFORM_BOOTSTRAP_TOKEN: token }), async (server) => {
    const headers = { authorization: `Bearer ${token}` }
    const created = await fetch(`${server.baseUrl}/v1/orgs`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "Bench" })
    })
    if (created.status !== 201) throw new Error(`creating the organization answered ${created.status}`)
    const org = await created.json() as { id: string }
    return use(server, { url: `/v1/orgs/${org.id}`, headers })
  })
}

const withStopped = async <A>(start: () => Promise<Process>, use: (started: Process) => Promise<A>) => {
  const started = await start()
  try {
    return await use(started)
  } finally {
    await started.stop()
  }
}

const medianOf = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** Each figure's median over the rounds' measurements. */
const medians = (measurements: ReadonlyArray<Measurement>): Measurement => ({
  requestsPerSecond: medianOf(measurements.map((measured) => measured.requestsPerSecond)),
  p99Ms: medianOf(measurements.map((measured) => measured.p99Ms)),
  cpuMicrosecondsPerRequest: medianOf(measurements.map((measured) => measured.cpuMicrosecondsPerRequest!))
})

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
    embedded = await withOrganization({ DATA_DIR: dataDir.dir }, (server, { headers, url }) =>
      measure(`${server.baseUrl}${url}`, headers, server))
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
    const { baseline, onPostgres } = await withOrganization(
      { DATABASE_URL: database.url, DATA_DIR: postgresDataDir.dir },
      // The server made its organization, user and key in the database: the baseline reads the same rows.
      (server, { headers, url }) =>
        withStopped(() => startProcess("bench/baselineServer.ts", { DATABASE_URL: database.url }), async (baseline) => {
          const ours: Array<Measurement> = []
          const theirs: Array<Measurement> = []
          for (let round = 0; round < ROUNDS; round++) {
            ours.push(await measure(`${server.baseUrl}${url}`, headers, server))
            theirs.push(await measure(`${baseline.baseUrl}${url}`, headers, baseline))
          }
          return { onPostgres: medians(ours), baseline: medians(theirs) }
        })
    )
    const ratios = (measured: Measurement) => ({
      ratio: measured.requestsPerSecond / baseline.requestsPerSecond,
      cpuRatio: baseline.cpuMicrosecondsPerRequest! / measured.cpuMicrosecondsPerRequest!
    })
    rows[0] = { ...rows[0], ...ratios(embedded) }
    rows.push({ benchmark: BENCHMARK, target: `server, Postgres (median of ${ROUNDS})`, ...pick(onPostgres), ...ratios(onPostgres) })
    rows.push({ benchmark: BENCHMARK, target: `baseline node:http + pg (median of ${ROUNDS})`, ...pick(baseline), ...ratios(baseline) })
  } finally {
    postgresDataDir.remove()
    await database.drop()
  }
  return rows
}
