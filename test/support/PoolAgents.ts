/**
 * An agent of the runtime project whose config names a machine pool with one initial machine
 * (`initial_num_machines: 1`): launched, then waited for until the machine the pool started for it
 * is `idle` (its daemon registered). Machines of a pool are named after it (`<pool name>-…`).
 */
import { Effect } from "effect"
import type { MachinePoolId } from "../../src/domain/shared/Ids.ts"
import { eventually } from "./Polling.ts"
import type { RuntimeProject } from "./RuntimeProject.ts"

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
