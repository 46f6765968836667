/**
 * Agent configs: creations per second with distinct sources (each one parsed, validated,
 * resolved, compiled and inserted), and re-sending an existing source (the idempotent 200 path).
 * `measureAgentConfigs(baseUrl, token)` runs against a server that is already up, with a token
 * whose user may create organizations; `agentConfigs` starts one on the embedded PGlite.
 */
import autocannon from "autocannon"
import {
  type Benchmark,
  CONNECTIONS,
  DURATION_SECONDS,
  newToken,
  type Row,
  startProcess,
  temporaryDataDir
} from "./Harness.ts"

const BENCHMARK = "POST /v1/orgs/{orgID}/projects/{projectID}/agent-configs"

const sourceNumbered = (n: number) =>
  `# benchmark config ${n}
instruction: |
  You are agent number ${n}. Answer briefly.
model:
  provider_config: Bench provider
  name: Bench model
  reasoning: { effort: low }
tools:
  lookup:
    type: custom
    description: Looks something up
    input_schema: { type: object, properties: { q: { type: string } } }
max_depth: 2
`

/** POST `body` as JSON; fails unless the status is one of `expected`. */
const post = async (url: string, token: string, body: unknown, expected: ReadonlyArray<number>) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (!expected.includes(response.status)) throw new Error(`POST ${url} answered ${response.status}: ${text}`)
  return JSON.parse(text) as { id: string }
}

/** An organization with a project, a provider config and a reasoning model granted to the project. */
const setUp = async (baseUrl: string, token: string) => {
  const org = await post(`${baseUrl}/v1/orgs`, token, { name: `Bench ${Date.now()}` }, [201])
  const project = await post(`${baseUrl}/v1/orgs/${org.id}/projects`, token, { name: "Bench" }, [201])
  const provider = await post(`${baseUrl}/v1/orgs/${org.id}/model-provider-configs`, token, {
    name: "Bench provider",
    api_format: "openai-responses",
    base_url: "http://127.0.0.1:9/v1"
  }, [201])
  const model = await post(`${baseUrl}/v1/orgs/${org.id}/models`, token, {
    provider_config_id: provider.id,
    name: "Bench model",
    provider_model_slug: "bench-1",
    context_window_tokens: 128_000,
    supports_tools: true,
    supports_reasoning: true,
    input_modalities: ["text"],
    output_modalities: ["text"]
  }, [201])
  await post(`${baseUrl}/v1/orgs/${org.id}/models/${model.id}/grants`, token, { target_project_id: project.id }, [201])
  return `${baseUrl}/v1/orgs/${org.id}/projects/${project.id}/agent-configs`
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]

/** CONNECTIONS workers, each posting new sources until the time is up; every answer must be 201. */
const measureCreations = async (url: string, token: string) => {
  const latencies: Array<number> = []
  let next = 0
  const deadline = performance.now() + DURATION_SECONDS * 1000
  const worker = async () => {
    while (performance.now() < deadline) {
      const started = performance.now()
      await post(url, token, { source: sourceNumbered(next++), source_format: "yaml" }, [201])
      latencies.push(performance.now() - started)
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: CONNECTIONS }, worker))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return { requestsPerSecond: Math.round(latencies.length / seconds), p99Ms: Math.round(percentile(latencies, 0.99)) }
}

/** The same source again and again: every answer must be the existing config (200). */
const measureResend = async (url: string, token: string) => {
  const body = JSON.stringify({ source: sourceNumbered(-1), source_format: "yaml" })
  await post(url, token, JSON.parse(body), [201, 200])
  const options = {
    url,
    method: "POST" as const,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
    connections: CONNECTIONS
  }
  await autocannon({ ...options, duration: 2 })
  const result = await autocannon({ ...options, duration: DURATION_SECONDS })
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result.requests.average === 0) {
    throw new Error(`re-send: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`)
  }
  return { requestsPerSecond: Math.round(result.requests.average), p99Ms: result.latency.p99 }
}

export const measureAgentConfigs = async (baseUrl: string, token: string, target: string): Promise<Array<Row>> => {
  const url = await setUp(baseUrl, token)
  const created = await measureCreations(url, token)
  const resent = await measureResend(url, token)
  return [
    { benchmark: BENCHMARK, target, ...created, note: "201: distinct YAML sources" },
    { benchmark: BENCHMARK, target, ...resent, note: "200: the same source re-sent" }
  ]
}

export const agentConfigs: Benchmark = async () => {
  const token = newToken()
  const dataDir = temporaryDataDir()
  try {
    const server = await startProcess("src/main.ts", { DATA_DIR: dataDir.dir, AGENT_PLATFORM_BOOTSTRAP_TOKEN: token })
    try {
      return await measureAgentConfigs(server.baseUrl, token, "server, embedded PGlite")
    } finally {
      await server.stop()
    }
  } finally {
    dataDir.remove()
  }
}
