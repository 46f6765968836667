/**
 * A cluster pool the operator drops from AGENT_PLATFORM_CLUSTER_POOLS_FILE (docs/machine-pools.md,
 * "Cluster pools"): at the next start-up its machines are stopped at the provider (their daemon
 * processes end) and marked `deleted`, then the pool is deleted. Real daemon processes of the
 * `local` provider.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { afterAll } from "vitest"
import { installClusterPools } from "../support/ClusterPoolsFile.ts"
import { daemonRuns, killDaemonsNaming, LOCAL_PROVIDER_KEY, LocalPoolServerLive } from "../support/LocalPoolServer.ts"
import { agentOnPool } from "../support/PoolAgents.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"

const machineIds: Array<string> = []

afterAll(() => killDaemonsNaming(machineIds))

layer(LocalPoolServerLive, { timeout: "180 seconds", excludeTestServices: true })("cluster pools dropped by the operator", (it) => {
  it.effect("the dropped pool's machines are stopped and deleted, then the pool", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const orgPath = { orgID: rt.org.id }
      const key = yield* rt.client.secrets.create({ params: orgPath, payload: { name: "Local key", value: Redacted.make(LOCAL_PROVIDER_KEY) } })
      const declared = {
        org_id: rt.org.id,
        name: "operators-local",
        provider: "local",
        provider_auth_secret_id: key.id,
        default_machine_provider_options: {},
        max_total_machines: 1
      }
      const config = { localProviderKey: Option.some(Redacted.make(LOCAL_PROVIDER_KEY)) }
      yield* installClusterPools([declared], { config })
      const [pool] = (yield* rt.client.machinePools.list({ params: orgPath, query: {} })).data
      expect([pool.name, pool.management_kind]).toEqual(["operators-local", "cluster"])
      yield* rt.client.machinePools.createGrant({ params: { orgID: rt.org.id, poolID: pool.id }, payload: { target_project_id: rt.project.id } })
      const { machine } = yield* agentOnPool(rt, pool)
      machineIds.push(machine.id)
      expect(daemonRuns(machine.id)).toBe(true)

      // The operator drops the pool from the file; the server starts again.
      yield* installClusterPools([], { config })
      const after = yield* rt.client.machines.get({ params: { orgID: rt.org.id, machineID: machine.id } })
      expect(after.status).toBe("deleted")
      expect(daemonRuns(machine.id)).toBe(false)
      const gone = yield* Effect.result(rt.client.machinePools.get({ params: { orgID: rt.org.id, poolID: pool.id } }))
      expect(gone._tag === "Failure" && gone.failure._tag).toBe("NotFound")
    }))
})
