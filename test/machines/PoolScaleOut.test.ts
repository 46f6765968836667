/**
 * A `local` pool served by two server processes on one Postgres, each with a data directory of
 * its own, as on two hosts behind a load balancer (docs/scale-out.md, "Pool machines"): each
 * process starts its agents' machines under its own directory and records where; neither takes
 * the other's machines for ended because its own provider does not list them. Machines started
 * through each process register and run their commands, stay through several sweeps, and stay
 * when one process is restarted (its start-up reconciliation leaves the other's alone). A machine
 * deleted through the other process, and the pool deleted through a process without machines of
 * it, are stopped by the process of their location (its sweep).
 *
 * Postgres only: the embedded database is one process.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import { join } from "node:path"
import type { Client } from "../../src/api/Client.ts"
import type { AgentId, MachineId } from "../../src/domain/shared/Ids.ts"
import { MACHINES_DIRECTORY } from "../../src/layers/DataDir.ts"
import { waitForShards } from "../support/ClusterShards.ts"
import { daemonRuns, killDaemonsNaming } from "../support/LocalPoolServer.ts"
import { until } from "../support/Polling.ts"
import { type ServerProcess, startServer, usesEmbeddedDatabase, withClient } from "../support/Processes.ts"
import { scriptedModel } from "../support/ScriptedModel.ts"
import { Reply } from "../support/ScriptedProvider.ts"
import { serverProcesses } from "../support/ServerProcesses.ts"
import { uniqueEmail } from "../support/TestApp.ts"

const TIMEOUT_MS = 300_000
const LOCAL_KEY = `local-key-${randomBytes(8).toString("hex")}`
/** Long enough for several of every process's pool sweeps (one every 2 s). */
const SEVERAL_SWEEPS_MS = 8_000
const SIDES = [0, 1] as const

describe.skipIf(usesEmbeddedDatabase)("a local pool served by processes with data directories of their own (Postgres only)", () => {
  const poolIds: Array<string> = []
  const servers = serverProcesses(TIMEOUT_MS, () => killDaemonsNaming(poolIds))

  it("each process's machines run, and stay through the other's sweeps and restart", async () => {
    const token = `pool-scale-out-${randomBytes(16).toString("hex")}`
    const env = {
      AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
      AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("pool-scale-out"),
      AGENT_PLATFORM_LOCAL_PROVIDER_KEY: LOCAL_KEY
    }
    const dataDirs = SIDES.map(() => servers.dataDir())
    const processes: Array<ServerProcess> = await Promise.all(SIDES.map((side) => startServer(dataDirs[side], env)))
    await waitForShards(process.env.DATABASE_URL!, processes.length)
    const on = <A, E>(side: number, f: (client: Client) => Effect.Effect<A, E>) => withClient(processes[side].baseUrl, token, f)

    const setup = await on(0, (client) =>
      Effect.gen(function*() {
        const org = yield* client.organizations.create({ payload: { name: "Pools across hosts" } })
        const orgID = org.id
        const project = yield* client.projects.create({ params: { orgID }, payload: { name: "Main" } })
        const slug = `pool-scale-out-${randomBytes(4).toString("hex")}`
        const { model } = yield* scriptedModel(client, orgID, {
          format: "openai-responses",
          baseUrl: servers.provider.baseUrl("openai-responses"),
          slug
        })
        yield* client.models.createGrant({ params: { orgID, modelID: model.id }, payload: { target_project_id: project.id } })
        const localKey = yield* client.secrets.create({ params: { orgID }, payload: { name: "Local key", value: Redacted.make(LOCAL_KEY) } })
        const pool = yield* client.machinePools.create({
          params: { orgID },
          payload: {
            name: "hosts",
            provider: "local",
            provider_auth_secret_id: localKey.id,
            default_machine_provider_options: {},
            max_total_machines: 4
          }
        })
        yield* client.machinePools.createGrant({ params: { orgID, poolID: pool.id }, payload: { target_project_id: project.id } })
        const config = yield* client.agentConfigs.create({
          params: { orgID, projectID: project.id },
          payload: {
            source_format: "yaml",
            source: [
              "instruction: Work on the machine.",
              "model: { provider_config: Scripted, name: Scripted model }",
              "tools:",
              "  run_command: { permission: allow }",
              "machine_sources:",
              `  - machine_pool_id: ${pool.id}`,
              "    initial_num_machines: 1",
              ""
            ].join("\n")
          }
        })
        return { orgID, projectPath: { orgID, projectID: project.id }, slug, pool, config }
      }))
    poolIds.push(setup.pool.id)
    const agentPath = (agentID: AgentId) => ({ ...setup.projectPath, agentID })
    const machineDirectory = (side: number, machineId: string) => join(dataDirs[side], MACHINES_DIRECTORY, setup.pool.id, machineId)
    const poolMachines = () =>
      Promise.all([
        on(0, (client) => client.machines.list({ params: { orgID: setup.orgID }, query: { limit: 100 } })),
        on(0, (client) => client.machines.list({ params: { orgID: setup.orgID }, query: { limit: 100, status: "deleted" } }))
      ]).then((pages) => pages.flatMap((page) => page.data).filter((machine) => machine.name.startsWith("hosts-")))
    const bothIdle = (what: string) =>
      until(poolMachines, (list) => list.length === 2 && list.every((machine) => machine.status === "idle"), what, 90_000)

    // An agent launched through each process: its initial machine is started by that process, under its data directory.
    const agents: Array<{ readonly id: AgentId }> = []
    for (const side of SIDES) {
      agents.push(await on(side, (client) => client.agents.create({ params: setup.projectPath, payload: { agent_config_id: setup.config.id } })))
    }
    const started = await bothIdle("a machine of each process registered")
    const machineOf = SIDES.map((side) => {
      const found = started.filter((machine) => existsSync(machineDirectory(side, machine.id)))
      expect(found).toHaveLength(1)
      return found[0].id as MachineId
    })
    expect(machineOf[0]).not.toBe(machineOf[1])

    /** Each agent runs `pwd` through process `through(side)`: in the work directory of its machine. */
    const commandsRun = async (through: (side: number) => number) => {
      for (const side of SIDES) {
        const agentID = agents[side].id
        await Effect.runPromise(servers.provider.script(
          [Reply.toolCall("run_command", { command: "pwd" }), Reply.text("Done.")],
          { model: setup.slug }
        ))
        const before = (await on(side, (client) => client.toolCalls.list({ params: agentPath(agentID), query: {} }))).data.length
        await on(through(side), (client) =>
          client.agents.sendInput({ params: agentPath(agentID), payload: { content_blocks: [{ type: "text", text: "Where are you?" }] } }))
        const calls = await until(
          () => on(side, (client) => client.toolCalls.list({ params: agentPath(agentID), query: {} })).then((page) => page.data),
          (list) => list.length === before + 1 && list.every((call) => call.state === "completed"),
          `agent ${agentID}'s command`,
          90_000
        )
        expect(calls.map((call) => call.outcome)).toEqual(calls.map(() => "succeeded"))
        const events = await on(side, (client) => client.agents.listEvents({ params: agentPath(agentID), query: { limit: 200 } }))
        const results = events.data.flatMap((event) => event.event_kind === "tool_result" ? [JSON.stringify(event.content_blocks)] : [])
        expect(results.at(-1)).toContain(join(machineDirectory(side, machineOf[side]), "work"))
      }
    }

    await commandsRun((side) => side)
    // Several sweeps of each process later, each process's machine is still there and idle.
    await new Promise((resolve) => setTimeout(resolve, SEVERAL_SWEEPS_MS))
    expect((await poolMachines()).map((machine) => machine.status)).toEqual(["idle", "idle"])

    // The second process restarted on its port (its daemons reconnect there): while it is down its
    // daemons are unconnected, and at its start it reconciles the pool with its own provider.
    await processes[1].stop()
    processes[1] = await startServer(dataDirs[1], { ...env, PORT: String(processes[1].port) })
    await new Promise((resolve) => setTimeout(resolve, SEVERAL_SWEEPS_MS))
    await bothIdle("both machines idle after the restart")
    for (const machineId of machineOf) expect(daemonRuns(machineId)).toBe(true)
    // Each agent's command again, each through the other process.
    await commandsRun((side) => 1 - side)

    /** The machine of `side` deleted, by the process of its location: its daemon stopped and its directory removed. */
    const stoppedAtItsLocation = async (side: number) => {
      await until(
        () => on(side, (client) => client.machines.get({ params: { orgID: setup.orgID, machineID: machineOf[side] } })),
        (machine) => machine.status === "deleted",
        `machine ${machineOf[side]} deleted`,
        60_000
      )
      expect(daemonRuns(machineOf[side])).toBe(false)
      expect(existsSync(machineDirectory(side, machineOf[side]))).toBe(false)
    }
    // The first process's machine deleted through the second: the first stops it.
    await on(1, (client) => client.machines.remove({ params: { orgID: setup.orgID, machineID: machineOf[0] } }))
    await stoppedAtItsLocation(0)
    // The pool deleted through the first process, which has no machine of it left: the second
    // stops its machine before the pool goes.
    await on(0, (client) => client.machinePools.remove({ params: { orgID: setup.orgID, poolID: setup.pool.id } }))
    await stoppedAtItsLocation(1)
    await Promise.all(processes.map((server) => server.stop()))
  }, TIMEOUT_MS)
})
