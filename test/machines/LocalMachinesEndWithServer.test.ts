/**
 * With DATA_DIR `memory://` (the tests' setting) the server keeps nothing on disk, so nothing it
 * starts outlives it (docs/machine-pools.md, "`local`"): when the server stops, the daemons of the
 * machines its `local` pools started are stopped, and their directories removed.
 */
import { expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { daemonRuns, killDaemonsNaming, LOCAL_PROVIDER_KEY, LocalPoolServerLive } from "../support/LocalPoolServer.ts"
import { agentOnPool } from "../support/PoolAgents.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"

const machineIds: Array<string> = []

afterAll(() => killDaemonsNaming(machineIds))

/** A local pool with one machine, started for an agent, and that machine's directory. */
const machineOfLocalPool = Effect.gen(function*() {
  const rt = yield* runtimeProject(yield* ScriptedProvider)
  const orgPath = { orgID: rt.org.id }
  const key = yield* rt.client.secrets.create({ params: orgPath, payload: { name: "Local key", value: Redacted.make(LOCAL_PROVIDER_KEY) } })
  const pool = yield* rt.client.machinePools.create({
    params: orgPath,
    payload: { name: "ends-with-server", provider: "local", provider_auth_secret_id: key.id, default_machine_provider_options: {}, max_total_machines: 1 }
  })
  yield* rt.client.machinePools.createGrant({ params: { orgID: rt.org.id, poolID: pool.id }, payload: { target_project_id: rt.project.id } })
  const { machine } = yield* agentOnPool(rt, pool)
  machineIds.push(machine.id)
  return { machineId: machine.id, poolDirectory: join(tmpdir(), "agent-platform-machines", pool.id) }
})

it.live("a server on memory:// stops the daemons of its local machines when it stops, and removes their directories", () =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const server = yield* Layer.buildWithScope(LocalPoolServerLive, scope)
    const { machineId, poolDirectory } = yield* Effect.provide(machineOfLocalPool, server)
    expect(daemonRuns(machineId)).toBe(true)
    expect(existsSync(join(poolDirectory, machineId, "work"))).toBe(true)

    yield* Scope.close(scope, Exit.void)
    expect(daemonRuns(machineId)).toBe(false)
    expect(existsSync(poolDirectory)).toBe(false)
  }), { timeout: 120_000 })
