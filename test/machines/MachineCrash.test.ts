/**
 * The server killed mid-call (docs/machines.md, "Requests: the mailbox"): the server runs as a
 * child process on a fixed port, a real daemon is connected to it, an agent's `run_command` is
 * running on the machine when the server is killed with SIGKILL. The command finishes while the
 * server is down; the server starts again on the same port, the daemon reconnects and delivers
 * the result it kept, and the turn finishes: the command ran once, every event exactly once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { Client } from "../../src/api/Client.ts"
import { daemonDirs, killDaemons, startDaemon } from "../support/Daemons.ts"
import { until } from "../support/Polling.ts"
import { freePort, startServer, withClient } from "../support/Processes.ts"
import { scriptedModel } from "../support/ScriptedModel.ts"
import { Reply } from "../support/ScriptedProvider.ts"
import { serverProcesses } from "../support/ServerProcesses.ts"
import { uniqueEmail } from "../support/TestApp.ts"

const TIMEOUT_MS = 240_000
const servers = serverProcesses(TIMEOUT_MS, killDaemons)



describe("machines: the server killed mid-call", () => {
  it("the daemon delivers the result it kept to the restarted server; the command ran once; the turn finishes", async () => {
    const dataDir = servers.dataDir()
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const token = `crash-${randomBytes(16).toString("hex")}`
    const env = { AGENT_PLATFORM_BOOTSTRAP_TOKEN: token, AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("crash"), PORT: String(port) }
    const run = <A, E>(f: (client: Client) => Effect.Effect<A, E>) => withClient(baseUrl, token, f)
    const slug = `machine-crash-${randomBytes(4).toString("hex")}`
    const marker = `sleep 4.${Math.floor(Math.random() * 1000)}`
    await Effect.runPromise(servers.provider.script([
      Reply.toolCall("run_command", { command: `${marker}; echo ran >> count.txt` }, "call_m"),
      Reply.text("It ran.")
    ], { model: slug }))

    const first = await startServer(dataDir, env)
    const dirs = daemonDirs()
    const work = join(dirs.root, "work")
    mkdirSync(work)
    const setup = await run((client) =>
      Effect.gen(function*() {
        const org = yield* client.organizations.create({ payload: { name: "Crash" } })
        const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
        const { model } = yield* scriptedModel(client, org.id, { format: "openai-responses", baseUrl: servers.provider.baseUrl("openai-responses"), slug })
        yield* client.models.createGrant({ params: { orgID: org.id, modelID: model.id }, payload: { target_project_id: project.id } })
        const daemonToken = yield* client.machines.createDaemonToken({ params: { orgID: org.id }, payload: { name: "d" } })
        return { org, project, daemonToken }
      }))
    startDaemon({ server: baseUrl, token: setup.daemonToken.token, name: "crash", dirs: [work], state: dirs.state })
    const machines = await until(
      () => run((client) => client.machines.list({ params: { orgID: setup.org.id }, query: { status: "online" } })),
      (page) => page.data.length === 1,
      "the machine online"
    )
    const machine = machines.data[0]
    const projectPath = { orgID: setup.org.id, projectID: setup.project.id }
    const agentPath = await run((client) =>
      Effect.gen(function*() {
        yield* client.machines.createGrant({ params: { orgID: setup.org.id, machineID: machine.id }, payload: { target_project_id: setup.project.id } })
        const config = yield* client.agentConfigs.create({
          params: projectPath,
          payload: {
            source_format: "yaml",
            source: [
              "instruction: Work.",
              "model: { provider_config: Scripted, name: Scripted model }",
              "tools:",
              "  run_command: { permission: allow }",
              "machine_sources:",
              `  - machine_id: ${machine.id}`,
              `    cwd: ${work}`,
              ""
            ].join("\n")
          }
        })
        const agent = yield* client.agents.create({ params: projectPath, payload: { agent_config_id: config.id } })
        yield* client.agents.sendInput({ params: { ...projectPath, agentID: agent.id }, payload: { content_blocks: [{ type: "text", text: "run" }] } })
        return { ...projectPath, agentID: agent.id }
      }))
    await until(async () => spawnSync("pgrep", ["-f", marker]).status === 0, (running) => running, "the command running")
    await first.kill()
    // The command finishes while the server is down.
    await until(async () => spawnSync("pgrep", ["-f", marker]).status !== 0, (done) => done, "the command done", 20_000)

    const second = await startServer(dataDir, env)
    try {
      const agent = await until(
        () => run((client) => client.agents.get({ params: agentPath })),
        (a) => a.status === "idle" && a.current_turn_id === null,
        "the turn to finish",
        90_000
      )
      expect(agent.status).toBe("idle")
      const events = await run((client) => client.agents.listEvents({ params: agentPath, query: { limit: 500 } })).then((page) => page.data)
      expect(events.map((event) => event.event_kind)).toEqual(["agent_input", "turn", "tool_call", "tool_result", "model_output", "turn"])
      expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6])
      expect(events[3]).toMatchObject({ outcome: "succeeded" })
      expect(events[5]).toMatchObject({ turn_status: "completed" })
      expect(readFileSync(join(work, "count.txt"), "utf8")).toBe("ran\n")
    } finally {
      await second.stop()
    }
  }, TIMEOUT_MS)
})
