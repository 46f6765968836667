/**
 * Machines from a `docker` pool, on the real Docker Engine (docs/machine-pools.md): an agent whose
 * source asks for one initial machine gets a container at launch, sized by the pool, running the
 * daemon; its commands run in that container; the pool refuses deletion while a call runs, shows
 * its usage, and deleting the machine or the pool removes the container.
 */
import { layer } from "@effect/vitest"
import { expect } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { describe } from "vitest"
import { containerName } from "../../src/services/machines/providers/DockerProvider.ts"
import { DOCKER_TEST_IMAGE } from "../support/DockerImage.ts"
import { dockerEngineAnswers, dockerPoolsRemovedAfter } from "../support/DockerEngine.ts"
import { eventually } from "../support/Polling.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { expectFailure, TestAppLive } from "../support/TestApp.ts"
import { fastRetries } from "../runtime/RuntimeLayer.ts"

describe.runIf(dockerEngineAnswers())("docker pools, on the real Docker Engine", () => {
  /** The pools the tests made: their containers are removed at the end, whatever happened. */
  const pools = dockerPoolsRemovedAfter()

  /** The container's limits and state, or null when there is none. */
  const container = (machineId: string) => {
    const inspected = spawnSync(
      "docker",
      ["inspect", "--format", "{{.State.Running}} {{.HostConfig.NanoCpus}} {{.HostConfig.Memory}}", containerName(machineId as never)],
      { encoding: "utf8" }
    )
    return inspected.status === 0 ? inspected.stdout.trim() : null
  }

  const DockerPoolTestLive = Layer.mergeAll(TestAppLive(), ScriptedProvider.layer).pipe(Layer.provide(fastRetries))

  layer(DockerPoolTestLive, { timeout: "240 seconds", excludeTestServices: true })("machine pools: machines from a docker pool", (it) => {
    it.effect("an agent's initial machine is a container of the pool's size; its commands run there; deletion removes it", () =>
      Effect.gen(function*() {
        const provider = yield* ScriptedProvider
        const rt = yield* runtimeProject(provider)
        const orgPath = { orgID: rt.org.id }
        const auth = yield* rt.client.secrets.create({ params: orgPath, payload: { name: "Docker auth", value: Redacted.make("{}") } })
        const pool = yield* rt.client.machinePools.create({
          params: orgPath,
          payload: {
            name: "containers",
            provider: "docker",
            provider_auth_secret_id: auth.id,
            default_machine_provider_options: { image: DOCKER_TEST_IMAGE },
            max_total_machines: 2,
            default_machine_cpu: 1,
            default_machine_memory_mb: 256,
            max_total_cpu: 2,
            max_total_memory_mb: 1024
          }
        })
        pools.add(pool.id)
        const poolPath = { orgID: rt.org.id, poolID: pool.id }
        yield* rt.client.machinePools.createGrant({ params: poolPath, payload: { target_project_id: rt.project.id } })
        const config = yield* rt.client.agentConfigs.create({
          params: rt.projectPath,
          payload: {
            source_format: "yaml",
            source: [
              "instruction: Work in the container.",
              "model: { provider_config: Scripted, name: Scripted model }",
              "tools:",
              "  run_command: { permission: allow }",
              "machine_sources:",
              `  - machine_pool_id: ${pool.id}`,
              "    initial_num_machines: 1",
              "    machine_memory_mb: 512",
              ""
            ].join("\n")
          }
        })
        const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })

        // The initial machine: provisioned at launch, online once its daemon registers from the container.
        const listed = () =>
          rt.client.machines.list({ params: orgPath, query: {} }).pipe(
            Effect.map((page) => page.data.filter((machine) => machine.name.startsWith("containers-")))
          )
        const [machine] = yield* eventually(listed(), (list) => list.length === 1 && list[0].status === "idle", "the pool machine idle", "120 seconds")
        expect(container(machine.id)).toBe(`true 1000000000 ${512 * 1024 * 1024}`)
        expect(machine.platform).toBe("linux")
        // It serves this agent: it is not granted to projects.
        const grant = yield* expectFailure(rt.client.machines.createGrant({
          params: { orgID: rt.org.id, machineID: machine.id },
          payload: { target_project_id: rt.project.id }
        }))
        expect(grant).toMatchObject({ _tag: "InvalidRequest" })
        const used = yield* rt.client.machinePools.get({ params: poolPath })
        expect(used.usage).toEqual({ machines: 1, cpu: 1, memory_mb: 512 })

        // A command runs in the container (whose root has no /etc/debian_version, unlike this host).
        yield* provider.script([
          Reply.toolCall("run_command", {
            command: "node -e 'setTimeout(() => {}, 3000)'; pwd; test -e /etc/debian_version && echo host || echo container"
          }),
          Reply.text("Done.")
        ], { model: rt.slug })
        yield* rt.send(agent.id, "Where are you?")
        yield* eventually(rt.toolCalls(agent.id), (calls) => calls.length === 1 && calls[0].state === "running", "the call running")
        // The pool cannot go while the call runs.
        const pending = yield* expectFailure(rt.client.machinePools.remove({ params: poolPath }))
        expect(pending).toMatchObject({ _tag: "PendingWork" })
        yield* rt.idle(agent.id, "60 seconds")
        const [call] = yield* rt.toolCalls(agent.id)
        expect(call.outcome).toBe("succeeded")
        const events = yield* rt.events(agent.id)
        const result = JSON.stringify(events.filter((event) => event.event_kind === "tool_result"))
        expect(result).toContain("/workspace")
        expect(result).toContain("container")
        // The same machine served the call: still one.
        expect(yield* listed()).toHaveLength(1)

        // A command's background process ends with it and is reaped: Docker's init, not the daemon, is
        // the container's pid 1, so nothing a command leaves behind lingers as a zombie.
        yield* provider.script([
          Reply.toolCall("run_command", { command: "node -e 'setInterval(() => {}, 1000)' & echo started" }),
          Reply.toolCall("run_command", { command: 'for stat in /proc/[0-9]*/stat; do read -r line < "$stat" && echo "$line"; done' }),
          Reply.text("Listed.")
        ], { model: rt.slug })
        yield* rt.send(agent.id, "Start a background process, then list the processes")
        yield* rt.idle(agent.id, "60 seconds")
        const listing = (yield* rt.events(agent.id)).filter((event) => event.event_kind === "tool_result").at(-1)
        const processes = JSON.stringify(listing)
        expect(processes).toMatch(/\(sh\) R /)
        expect(processes).not.toMatch(/\) Z /)

        // Deleting the machine removes its container; the machine stays listed as deleted.
        yield* rt.client.machines.remove({ params: { orgID: rt.org.id, machineID: machine.id } })
        expect(container(machine.id)).toBeNull()
        const gone = yield* rt.client.machines.get({ params: { orgID: rt.org.id, machineID: machine.id } })
        expect(gone.status).toBe("deleted")
        expect(yield* listed()).toEqual([])
        expect((yield* rt.client.machinePools.get({ params: poolPath })).usage).toEqual({ machines: 0, cpu: 0, memory_mb: 0 })

        // The next call gets a new machine; deleting the pool removes its container too.
        yield* provider.script([Reply.toolCall("run_command", { command: "echo again" }), Reply.text("Again.")], { model: rt.slug })
        yield* rt.send(agent.id, "Once more")
        yield* rt.idle(agent.id, "120 seconds")
        const calls = yield* rt.toolCalls(agent.id)
        expect(calls.map((one) => one.outcome)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"])
        const second = (yield* listed()).find((one) => one.id !== machine.id)
        expect(second).toBeDefined()
        expect(container(second!.id)).toMatch(/^true /)
        yield* rt.client.machinePools.remove({ params: poolPath })
        expect(container(second!.id)).toBeNull()
      }), { timeout: 240_000 })
  })
})
