/**
 * Machines from pools (docs/machine-pools.md): the time from an agent's first built-in call to
 * its result when the pool must start a machine for it (cold: the provider starts the machine,
 * its daemon starts and registers, then the call runs) and when the agent's machine is up and
 * idle (warm), for the `local` provider and, when a Docker Engine answers, the `docker` one (the
 * test image of test/support/DockerImage.ts). The server runs as a child process on the embedded
 * PGlite; each sample is a new agent (cold) followed by a second turn of it (warm). The figure
 * is `tool_result.created_at - tool_call.created_at` of `run_command true`.
 */
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { ensureDockerImage } from "../test/support/DockerImage.ts"
import { startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import { newToken, startProcess, temporaryDataDir } from "./Harness.ts"
import { toolAgent, toolRoundTrips } from "./machines.ts"
import { followTurns, percentile, request, type RuntimeRow } from "./runtime.ts"

const SAMPLES = 5

const dockerAnswers = () => spawnSync("docker", ["version"], { stdio: "ignore" }).status === 0

export const pools = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  const { close, provider } = await startScriptedProvider({ record: false })
  const token = newToken()
  const localKey = randomBytes(16).toString("hex")
  const dataDir = temporaryDataDir()
  const rows: Array<RuntimeRow> = []
  const server = await startProcess("src/main.ts", {
    DATA_DIR: dataDir.dir,
    AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
    AGENT_PLATFORM_LOCAL_PROVIDER_KEY: localKey
  })
  try {
    const base = server.baseUrl
    const org = await request("POST", `${base}/v1/orgs`, token, { name: "Pool bench" })
    const project = await request("POST", `${base}/v1/orgs/${org.id}/projects`, token, { name: "Bench" })
    const secret = await request("POST", `${base}/v1/orgs/${org.id}/secrets`, token, { name: "Key", value: "sk-bench" })
    const localSecret = await request("POST", `${base}/v1/orgs/${org.id}/secrets`, token, { name: "Local key", value: localKey })
    const providerConfig = await request("POST", `${base}/v1/orgs/${org.id}/model-provider-configs`, token, {
      name: "Bench provider",
      api_format: "openai-responses",
      base_url: provider.baseUrl("openai-responses"),
      auth_secret_id: secret.id
    })
    const bench = { base, token, orgId: org.id, projectId: project.id, providerConfigId: providerConfig.id }
    const poolBodies: Array<[string, Record<string, unknown>]> = [[
      "local",
      { provider: "local", provider_auth_secret_id: localSecret.id, default_machine_provider_options: {} }
    ]]
    if (dockerAnswers()) {
      poolBodies.push([
        "docker",
        {
          provider: "docker",
          provider_auth_secret_id: localSecret.id,
          default_machine_provider_options: { image: await ensureDockerImage() },
          default_machine_cpu: 1,
          default_machine_memory_mb: 512,
          max_total_cpu: SAMPLES,
          max_total_memory_mb: SAMPLES * 512
        }
      ])
    } else {
      rows.push({ name: "docker: skipped, no Docker Engine answers `docker version`", value: 0, unit: "" })
    }
    let agentCount = 0
    for (const [kind, body] of poolBodies) {
      const pool = await request("POST", `${base}/v1/orgs/${org.id}/machine-pools`, token, {
        name: `bench-${kind}`,
        max_total_machines: SAMPLES,
        ...body
      })
      await request("POST", `${base}/v1/orgs/${org.id}/machine-pools/${pool.id}/grants`, token, { target_project_id: project.id })
      const cold: Array<number> = []
      const warm: Array<number> = []
      for (let sample = 0; sample < SAMPLES; sample++) {
        const agentUrl = await toolAgent(
          bench,
          provider,
          `bench-pool-${agentCount++}`,
          [`  - machine_pool_id: ${pool.id}`],
          2,
          "run_command",
          { command: "true" }
        )
        const abort = new AbortController()
        const turnEnded = await followTurns(agentUrl, token, abort.signal)
        for (let turn = 0; turn < 2; turn++) {
          const accepted = await request("POST", `${agentUrl}/inputs`, token, { content_blocks: [{ type: "text", text: "go" }] })
          const status = await turnEnded(accepted.event.turn_id)
          if (status !== "completed") throw new Error(`a benchmark turn ended ${status}`)
        }
        abort.abort()
        const [first, second] = await toolRoundTrips(agentUrl, token, "run_command")
        cold.push(first)
        warm.push(second)
      }
      await request("DELETE", `${base}/v1/orgs/${org.id}/machine-pools/${pool.id}`, token)
      for (const [label, values] of [["cold (the pool starts a machine)", cold], ["warm (the agent's machine is idle)", warm]] as const) {
        const sorted = [...values].sort((a, b) => a - b)
        rows.push({ name: `${kind}: first call to result p50, ${label}, ${SAMPLES} agents`, value: percentile(sorted, 0.5), unit: "ms" })
        rows.push({ name: `${kind}: first call to result max, ${label}, ${SAMPLES} agents`, value: sorted[sorted.length - 1], unit: "ms" })
      }
    }
  } finally {
    await server.stop()
    dataDir.remove()
    await close()
  }
  return rows
}
