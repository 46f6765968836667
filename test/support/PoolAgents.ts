/**
 * Agents of the runtime project on machine pools: a `local` pool of one machine; an agent whose
 * pool has started its machine; a new agent's first command on a pool machine. Machines of a pool
 * are named after it (`<pool name>-…`).
 */
import { Effect, Redacted } from "effect"
import type { MachinePoolId } from "../../src/domain/shared/Ids.ts"
import { LOCAL_PROVIDER_KEY } from "./LocalPoolServer.ts"
import { eventually } from "./Polling.ts"
import { commandConfig, type RuntimeProject } from "./RuntimeProject.ts"
import { Reply, type ScriptedProviderShape } from "./ScriptedProvider.ts"

/**
 * A `local` pool of one machine, granted to the runtime project, its auth secret holding the
 * operator's key (LocalPoolServer.ts); its id is added to `created`, for the test's clean-up.
 */
export const localPool = (
  rt: RuntimeProject,
  name: string,
  options: { readonly protectedPool: boolean; readonly env?: Record<string, string> },
  created: Array<string>
) =>
  Effect.gen(function*() {
    const orgPath = { orgID: rt.org.id }
    const key = yield* rt.client.secrets.create({
      params: orgPath,
      payload: { name: `Local key for ${name}`, value: Redacted.make(LOCAL_PROVIDER_KEY) }
    })
    const pool = yield* rt.client.machinePools.create({
      params: orgPath,
      payload: {
        name,
        provider: "local",
        provider_auth_secret_id: key.id,
        default_machine_provider_options: {},
        max_total_machines: 1,
        runtime_protection_enabled: options.protectedPool,
        ...(options.env === undefined ? {} : { default_machine_env: options.env })
      }
    })
    created.push(pool.id)
    yield* rt.client.machinePools.createGrant({ params: { orgID: rt.org.id, poolID: pool.id }, payload: { target_project_id: rt.project.id } })
    return pool
  })

/**
 * A new agent of the pool runs `true` on a machine of it, as its first call: waited for until the
 * agent is idle (60 s at most); how long that took, the call, and the texts of its tool results.
 */
export const firstCommandOnPool = (provider: ScriptedProviderShape, rt: RuntimeProject, poolId: MachinePoolId) =>
  Effect.gen(function*() {
    const config = yield* commandConfig(rt, { pool: poolId })
    const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
    yield* provider.script([Reply.toolCall("run_command", { command: "true" }), Reply.text("Done.")], { model: rt.slug })
    const started = Date.now()
    yield* rt.send(agent.id, "Run it")
    yield* rt.idle(agent.id, "60 seconds")
    const elapsedMs = Date.now() - started
    const [call] = yield* rt.toolCalls(agent.id)
    const results = (yield* rt.events(agent.id)).flatMap((event) =>
      event.event_kind === "tool_result" ? event.content_blocks.map((block) => (block as { text: string }).text) : []
    )
    return { elapsedMs, call, results }
  })

/**
 * An agent of the runtime project whose config names a machine pool with one initial machine
 * (`initial_num_machines: 1`): launched, then waited for until the machine the pool started for it
 * is `idle` (its daemon registered).
 */
export const agentOnPool = (rt: RuntimeProject, pool: { readonly id: MachinePoolId; readonly name: string }) =>
  Effect.gen(function*() {
    const config = yield* rt.client.agentConfigs.create({
      params: rt.projectPath,
      payload: {
        source_format: "yaml",
        source: [
          "instruction: Work on the machine.",
          "model: { provider_config: Scripted, name: Scripted model }",
          "machine_sources:",
          `  - machine_pool_id: ${pool.id}`,
          "    initial_num_machines: 1",
          ""
        ].join("\n")
      }
    })
    yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
    const listed = rt.client.machines.list({ params: { orgID: rt.org.id }, query: {} }).pipe(
      Effect.map((page) => page.data.find((machine) => machine.name.startsWith(`${pool.name}-`)))
    )
    const idle = yield* eventually(listed, (machine) => machine?.status === "idle", `the ${pool.name} machine idle`, "90 seconds")
    /** The pool's machine as it is now (a deleted one too, which the list leaves out). */
    const machineOf = rt.client.machines.get({ params: { orgID: rt.org.id, machineID: idle!.id } })
    return { machineOf, machine: idle! }
  })
