/**
 * Machines from a `local` pool, end to end (docs/machine-pools.md, "Provisioning"): the server
 * runs as a child process on a fixed port (daemons of pool machines reach it there, also after a
 * restart), with the local provider enabled, a short admission wait and a short "minute" for idle
 * deletion. Two agents whose configs name the pool run `run_command` in parallel, each on a machine
 * the pool started for it; a third is refused by the pool's limit; the server is killed and
 * started again, and the first agent's next call runs on the same machine (its file is there);
 * then the idle machines are deleted and their daemons stopped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import type { Client } from "../../src/api/Client.ts"
import type { AgentId, MachinePoolId, OrgId, ProjectId } from "../../src/domain/shared/Ids.ts"
import { until } from "../support/Polling.ts"
import { startServer, withClient } from "../support/Processes.ts"
import { Reply } from "../support/ScriptedProvider.ts"
import { serverProcesses } from "../support/ServerProcesses.ts"
import { ID_PATTERN, uniqueEmail } from "../support/TestApp.ts"

const TIMEOUT_MS = 300_000
const LOCAL_KEY = `local-key-${randomBytes(8).toString("hex")}`
/** One "minute" of delete_after_idle_minutes, in seconds, for this server. */
const MINUTE_SECONDS = 10
const ADMISSION_WAIT_SECONDS = 8

const servers = serverProcesses(TIMEOUT_MS, () => {
  for (const id of poolIds) spawnSync("pkill", ["-KILL", "-f", id])
})

const poolIds: Array<string> = []



type Run = <A, E>(f: (client: Client) => Effect.Effect<A, E>) => Promise<A>

/**
 * A server's set-up: a data directory, the local provider enabled and a short admission wait, and a
 * client of its bootstrap admin. The first start picks the port (another on a pick taken
 * meanwhile) and `keepPort` puts it in `env`: pool machines' daemons reach the server there, also
 * after a restart.
 */
const poolServer = async (extraEnv: Record<string, string> = {}) => {
  const token = `pool-${randomBytes(16).toString("hex")}`
  const env: Record<string, string> = {
    AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
    AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("pools"),
    AGENT_PLATFORM_LOCAL_PROVIDER_KEY: LOCAL_KEY,
    AGENT_PLATFORM_POOL_ADMISSION_WAIT_SECONDS: String(ADMISSION_WAIT_SECONDS),
    ...extraEnv
  }
  const run: Run = (f) => withClient(`http://127.0.0.1:${env.PORT}`, token, f)
  const keepPort = (server: { readonly port: number }) => {
    env.PORT = String(server.port)
  }
  return { dataDir: servers.dataDir(), env, keepPort, run }
}

/** The organization's machines whose names start with `prefix`, deleted ones included (listed only on request). */
const machinesNamed = async (
  run: Run,
  path: { readonly orgID: OrgId },
  prefix: string
) => {
  const [current, deleted] = await Promise.all([
    run((client) => client.machines.list({ params: path, query: { limit: 100 } })),
    run((client) => client.machines.list({ params: path, query: { limit: 100, status: "deleted" } }))
  ])
  return [...current.data, ...deleted.data].filter((machine) => machine.name.startsWith(prefix))
}

const daemonsRunning = (machineId: string) => spawnSync("pgrep", ["-f", machineId]).status === 0

/** The org's models, one per agent (scripts are queued per model slug), granted to the project. */
const models = (client: Client, orgID: OrgId, projectID: ProjectId, names: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const secret = yield* client.secrets.create({ params: { orgID }, payload: { name: "Provider key", value: Redacted.make("sk-x") } })
    const config = yield* client.modelProviderConfigs.create({
      params: { orgID },
      payload: { name: "Scripted", api_format: "openai-responses", base_url: servers.provider.baseUrl("openai-responses"), auth_secret_id: secret.id }
    })
    const slugs: Record<string, string> = {}
    for (const name of names) {
      const slug = `pool-${name}-${randomBytes(4).toString("hex")}`
      const model = yield* client.models.create({
        params: { orgID },
        payload: {
          provider_config_id: config.id,
          name,
          provider_model_slug: slug,
          context_window_tokens: 100_000,
          max_output_tokens: 4_000,
          default_max_output_tokens: 1_000,
          supports_tools: true,
          supports_reasoning: false,
          input_modalities: ["text"],
          output_modalities: ["text"]
        }
      })
      yield* client.models.createGrant({ params: { orgID, modelID: model.id }, payload: { target_project_id: projectID } })
      slugs[name] = slug
    }
    return slugs
  })

/** A config on the pool; `unset` names a pool default its overlay sets to null. */
const poolConfig = (client: Client, orgID: OrgId, projectID: ProjectId, model: string, poolId: MachinePoolId, unset?: string) =>
  client.agentConfigs.create({
    params: { orgID, projectID },
    payload: {
      source_format: "yaml",
      source: [
        "instruction: Work on the machine.",
        `model: { provider_config: Scripted, name: ${model} }`,
        "tools:",
        "  run_command: { permission: allow }",
        "machine_sources:",
        `  - machine_pool_id: ${poolId}`,
        `    env_overlay: { AGENT_NAME: ${model}${unset === undefined ? "" : `, ${unset}: null`} }`,
        ""
      ].join("\n")
    }
  })

describe("machine pools: machines from a local pool", () => {
  it("agents get machines the pool starts, within its limits; a restart loses nothing; idle machines are deleted", async () => {
    const { dataDir, env, keepPort, run } = await poolServer({ AGENT_PLATFORM_POOL_MINUTE_SECONDS: String(MINUTE_SECONDS) })
    let server = await startServer(dataDir, env)
    keepPort(server)

    const setup = await run((client) =>
      Effect.gen(function*() {
        const org = yield* client.organizations.create({ payload: { name: "Pools" } })
        const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
        const slugs = yield* models(client, org.id, project.id, ["Model A", "Model B", "Model C"])
        const key = yield* client.secrets.create({ params: { orgID: org.id }, payload: { name: "Local key", value: Redacted.make(LOCAL_KEY) } })
        const poolSecret = yield* client.secrets.create({
          params: { orgID: org.id },
          payload: { name: "Pool secret", value: Redacted.make("pool-s3cret") }
        })
        const pool = yield* client.machinePools.create({
          params: { orgID: org.id },
          payload: {
            name: "sandboxes",
            provider: "local",
            provider_auth_secret_id: key.id,
            default_machine_provider_options: {},
            max_total_machines: 2,
            default_machine_memory_mb: 512,
            default_machine_env: { POOL_GREETING: "from-the-pool", POOL_HINT: "pool-only" },
            default_machine_secret_env: { POOL_SECRET: poolSecret.id },
            delete_after_idle_minutes: 5
          }
        })
        yield* client.machinePools.createGrant({ params: { orgID: org.id, poolID: pool.id }, payload: { target_project_id: project.id } })
        const configs = {
          a: yield* poolConfig(client, org.id, project.id, "Model A", pool.id),
          b: yield* poolConfig(client, org.id, project.id, "Model B", pool.id, "POOL_HINT"),
          c: yield* poolConfig(client, org.id, project.id, "Model C", pool.id)
        }
        return { org, project, slugs, pool, poolSecret, configs }
      }))
    poolIds.push(setup.pool.id)
    const projectPath = { orgID: setup.org.id, projectID: setup.project.id }
    const agentPath = (agentID: AgentId) => ({ ...projectPath, agentID })
    const orgPath = { orgID: setup.org.id }
    const poolPath = { orgID: setup.org.id, poolID: setup.pool.id }
    const command = (label: string) =>
      `echo ${label} > mine.txt; echo "$POOL_GREETING $AGENT_NAME \${POOL_HINT-unset} $POOL_SECRET"; pwd`
    await Effect.runPromise(Effect.all([
      servers.provider.script([Reply.toolCall("run_command", { command: command("a") }), Reply.text("A done.")], { model: setup.slugs["Model A"] }),
      servers.provider.script([Reply.toolCall("run_command", { command: command("b") }), Reply.text("B done.")], { model: setup.slugs["Model B"] }),
      servers.provider.script([Reply.toolCall("run_command", { command: command("c") }), Reply.text("C done.")], { model: setup.slugs["Model C"] })
    ]))

    const launch = (configId: string, text: string) =>
      run((client) =>
        client.agents.create({
          params: projectPath,
          payload: { agent_config_id: configId as never, input: { content_blocks: [{ type: "text", text }] } }
        }))
    const idle = (agentID: AgentId, ms = 90_000) =>
      until(() => run((client) => client.agents.get({ params: agentPath(agentID) })), (a) => a.status === "idle" && a.current_turn_id === null, `agent ${agentID} idle`, ms)
    const calls = (agentID: AgentId) =>
      run((client) => client.toolCalls.list({ params: agentPath(agentID), query: {} })).then((page) => page.data)
    const results = (agentID: AgentId) =>
      run((client) => client.agents.listEvents({ params: agentPath(agentID), query: { limit: 200 } })).then((page) =>
        page.data.flatMap((event) => event.event_kind === "tool_result" ? [JSON.stringify(event.content_blocks)] : [])
      )
    const poolMachines = () => machinesNamed(run, orgPath, "sandboxes-")

    // Two agents in parallel: each gets a machine of its own.
    const [a, b] = await Promise.all([launch(setup.configs.a.id, "go a"), launch(setup.configs.b.id, "go b")])
    await Promise.all([idle(a.id), idle(b.id)])
    for (const agent of [a, b]) {
      const [call] = await calls(agent.id)
      expect([call.name, call.state, call.outcome]).toEqual(["run_command", "completed", "succeeded"])
    }
    const [resultA] = await results(a.id)
    const [resultB] = await results(b.id)
    // The pool's secret reached the command; its echo is redacted before anything stores it.
    expect(resultA).toContain(`from-the-pool Model A pool-only [redacted secret ${setup.poolSecret.id}]`)
    expect(resultA).not.toContain("pool-s3cret")
    // B's overlay unsets a pool default: its command does not see it, though its daemon has it.
    expect(resultB).toContain("from-the-pool Model B unset")
    const machines = await poolMachines()
    expect(machines).toHaveLength(2)
    for (const machine of machines) {
      expect(machine.id).toMatch(ID_PATTERN("mch"))
      expect(["idle", "online"]).toContain(machine.status)
      expect(daemonsRunning(machine.id)).toBe(true)
    }
    // Each command ran in the work directory of a machine of its own.
    const ranOn = (result: string) => machines.filter((machine) => result.includes(`${setup.pool.id}/${machine.id}/work`))
    expect(ranOn(resultA)).toHaveLength(1)
    expect(ranOn(resultB)).toHaveLength(1)
    expect(ranOn(resultA)[0].id).not.toBe(ranOn(resultB)[0].id)
    const usage = await run((client) => client.machinePools.get({ params: poolPath }))
    expect(usage.usage).toEqual({ machines: 2, cpu: 0, memory_mb: 1024 })

    // A third agent: the pool is full; its call waits, then fails with managed_work_admission_denied.
    const c = await launch(setup.configs.c.id, "go c")
    await idle(c.id, (ADMISSION_WAIT_SECONDS + 30) * 1000)
    const [callC] = await calls(c.id)
    expect([callC.state, callC.outcome]).toEqual(["completed", "failed"])
    expect((await results(c.id))[0]).toContain("managed_work_admission_denied")
    expect(await poolMachines()).toHaveLength(2)

    // The server killed and started again on the same port: the machines carry on.
    await server.kill()
    server = await startServer(dataDir, env)
    await Effect.runPromise(servers.provider.script(
      [Reply.toolCall("run_command", { command: "cat mine.txt" }), Reply.text("Still there.")],
      { model: setup.slugs["Model A"] }
    ))
    await run((client) => client.agents.sendInput({ params: agentPath(a.id), payload: { content_blocks: [{ type: "text", text: "again" }] } }))
    await idle(a.id)
    const secondCalls = await calls(a.id)
    expect(secondCalls.map((call) => call.outcome)).toEqual(["succeeded", "succeeded"])
    expect((await results(a.id))[1]).toContain(String.raw`\"stdout\":\"a\\n\"`)
    expect(await poolMachines()).toHaveLength(2)

    // Idle for delete_after_idle_minutes (5 "minutes" of MINUTE_SECONDS): both are deleted, their daemons stopped.
    const deleted = await until(
      poolMachines,
      (list) => list.length === 2 && list.every((machine) => machine.status === "deleted"),
      "the idle pool machines deleted",
      (5 * MINUTE_SECONDS + 40) * 1000
    )
    for (const machine of deleted) expect(daemonsRunning(machine.id)).toBe(false)
    const after = await run((client) => client.machinePools.get({ params: poolPath }))
    expect(after.usage).toEqual({ machines: 0, cpu: 0, memory_mb: 0 })

    await run((client) => client.machinePools.remove({ params: poolPath }))
    await server.stop()
  }, TIMEOUT_MS)

  it("the operator's key taken away: the pool starts no machine, and after a restart without the key its machines are stopped", async () => {
    const { dataDir, env, keepPort, run } = await poolServer()
    let server = await startServer(dataDir, env)
    keepPort(server)
    const setup = await run((client) =>
      Effect.gen(function*() {
        const org = yield* client.organizations.create({ payload: { name: "Revoked" } })
        const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
        const slugs = yield* models(client, org.id, project.id, ["Model A", "Model B"])
        const key = yield* client.secrets.create({ params: { orgID: org.id }, payload: { name: "Local key", value: Redacted.make(LOCAL_KEY) } })
        const pool = yield* client.machinePools.create({
          params: { orgID: org.id },
          payload: { name: "revoked", provider: "local", provider_auth_secret_id: key.id, default_machine_provider_options: {}, max_total_machines: 2 }
        })
        yield* client.machinePools.createGrant({ params: { orgID: org.id, poolID: pool.id }, payload: { target_project_id: project.id } })
        const configs = {
          a: yield* poolConfig(client, org.id, project.id, "Model A", pool.id),
          b: yield* poolConfig(client, org.id, project.id, "Model B", pool.id)
        }
        return { org, project, slugs, key, pool, configs }
      }))
    poolIds.push(setup.pool.id)
    const projectPath = { orgID: setup.org.id, projectID: setup.project.id }
    const orgPath = { orgID: setup.org.id }
    await Effect.runPromise(Effect.all([
      servers.provider.script([Reply.toolCall("run_command", { command: "echo on-host" }), Reply.text("A done.")], { model: setup.slugs["Model A"] }),
      servers.provider.script([Reply.toolCall("run_command", { command: "echo on-host" }), Reply.text("B done.")], { model: setup.slugs["Model B"] })
    ]))
    const launchAndWait = async (configId: string) => {
      const agent = await run((client) =>
        client.agents.create({
          params: projectPath,
          payload: { agent_config_id: configId as never, input: { content_blocks: [{ type: "text", text: "go" }] } }
        }))
      await until(
        () => run((client) => client.agents.get({ params: { ...projectPath, agentID: agent.id } })),
        (found) => found.status === "idle",
        `agent ${agent.id} idle`,
        90_000
      )
      const events = await run((client) =>
        client.agents.listEvents({ params: { ...projectPath, agentID: agent.id }, query: { limit: 200 } }))
      return events.data.flatMap((event) => event.event_kind === "tool_result" ? [event] : [])
    }
    const poolMachines = () => machinesNamed(run, orgPath, "revoked-")

    const [ranA] = await launchAndWait(setup.configs.a.id)
    expect(ranA).toMatchObject({ outcome: "succeeded" })
    const [machine] = await poolMachines()
    expect(daemonsRunning(machine.id)).toBe(true)

    // The organization's secret no longer holds the operator's key: no new machine starts.
    await run((client) =>
      client.secrets.rotate({ params: { orgID: setup.org.id, secretID: setup.key.id }, payload: { value: Redacted.make("not-the-key") } })
    )
    const [refusedB] = await launchAndWait(setup.configs.b.id)
    expect(refusedB).toMatchObject({ outcome: "failed" })
    expect(JSON.stringify(refusedB.content_blocks)).toContain("does not hold this server's local provider key")

    // The operator takes the key away: after the restart, the pool's running machine is stopped.
    await server.stop()
    const { AGENT_PLATFORM_LOCAL_PROVIDER_KEY: _taken, ...withoutKey } = env
    server = await startServer(dataDir, withoutKey)
    await until(poolMachines, (list) => list.every((found) => found.status === "deleted"), "the pool's machines deleted", 60_000)
    expect(daemonsRunning(machine.id)).toBe(false)
    await server.stop()
  }, TIMEOUT_MS)
})
