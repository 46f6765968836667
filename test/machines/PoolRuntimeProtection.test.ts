/**
 * Runtime protection (docs/machine-pools.md, "Deletion"): in a `local` pool with
 * `runtime_protection_enabled`, a machine whose daemon dies (killed here, as a crash would) stops
 * answering, and the pool deletes it once it is offline; in a pool without protection the same
 * machine stays, `offline`, for its daemon to come back.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { afterAll } from "vitest"
import { killDaemonsNaming, LOCAL_PROVIDER_KEY, LocalPoolServerLive } from "../support/LocalPoolServer.ts"
import { eventually } from "../support/Polling.ts"
import { agentOnPool } from "../support/PoolAgents.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"

const poolIds: Array<string> = []

afterAll(() => killDaemonsNaming(poolIds))

layer(LocalPoolServerLive, { timeout: "180 seconds", excludeTestServices: true })("machine pools: runtime protection", (it) => {
  it.effect("a machine whose daemon died is deleted by a protected pool, and kept offline by another", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const orgPath = { orgID: rt.org.id }
      const key = yield* rt.client.secrets.create({ params: orgPath, payload: { name: "Local key", value: Redacted.make(LOCAL_PROVIDER_KEY) } })
      const poolMachine = (protectedPool: boolean) =>
        Effect.gen(function*() {
          const name = protectedPool ? "protected" : "unprotected"
          const pool = yield* rt.client.machinePools.create({
            params: orgPath,
            payload: {
              name,
              provider: "local",
              provider_auth_secret_id: key.id,
              default_machine_provider_options: {},
              max_total_machines: 1,
              runtime_protection_enabled: protectedPool
            }
          })
          poolIds.push(pool.id)
          yield* rt.client.machinePools.createGrant({ params: { orgID: rt.org.id, poolID: pool.id }, payload: { target_project_id: rt.project.id } })
          return yield* agentOnPool(rt, pool)
        })
      const guarded = yield* poolMachine(true)
      const unguarded = yield* poolMachine(false)
      // Both daemons die at once (their whole sandboxes, as a crash of the process would).
      for (const { machine } of [guarded, unguarded]) expect(spawnSync("pkill", ["-KILL", "-f", machine.id]).status).toBe(0)
      // Offline at once (their sockets closed); 30 s without a sign of life, the protected pool deletes its machine.
      yield* eventually(guarded.machineOf, (machine) => machine?.status === "deleted", "the protected machine deleted", "90 seconds")
      const kept = yield* unguarded.machineOf
      expect(kept?.status).toBe("offline")
      const deleted = yield* guarded.machineOf
      expect(deleted!.updated_at.getTime() - deleted!.last_seen_at.getTime()).toBeGreaterThanOrEqual(30_000)
    }), { timeout: 180_000 })
})
