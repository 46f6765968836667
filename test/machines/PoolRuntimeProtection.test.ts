/**
 * Machines whose daemon stops (docs/machine-pools.md, "Deletion"), on a `local` pool:
 *
 * - a daemon that stops answering while its provider still runs it (stopped here with SIGSTOP, as
 *   a hung process would be): a pool with `runtime_protection_enabled` deletes its machine once it
 *   is offline; a pool without protection keeps it, `offline`, for its daemon to come back;
 * - a daemon that ends (killed here, as a crash would end it): its machine is deleted within
 *   seconds, whatever the protection, saying how it ended;
 * - a daemon that exits before it registers (here `NODE_OPTIONS` requires a module that does not
 *   exist): its machine is deleted within seconds, not after the 120 s registration timeout, and the
 *   call waiting for it fails with the end of the daemon's output.
 */
import { expect, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { afterAll } from "vitest"
import type { MachineId } from "../../src/domain/shared/Ids.ts"
import { killDaemonsNaming, LocalPoolServerLive } from "../support/LocalPoolServer.ts"
import { eventually } from "../support/Polling.ts"
import { agentOnPool, firstCommandOnPool, localPool } from "../support/PoolAgents.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"

const poolIds: Array<string> = []

afterAll(() => killDaemonsNaming(poolIds))

/** Why the pool deleted a machine, as its row keeps it. */
const failureOf = (machineId: MachineId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ failure: string | null }>`SELECT failure FROM machines WHERE id = ${machineId}`, (rows) => rows[0]?.failure ?? null))

/** Sends `signal` to every process of the machine (its daemon and its sandbox). */
const signal = (machineId: MachineId, name: "STOP" | "KILL") => expect(spawnSync("pkill", [`-${name}`, "-f", machineId]).status).toBe(0)

layer(LocalPoolServerLive, { timeout: "240 seconds", excludeTestServices: true })("machine pools: daemons that stop", (it) => {
  const setUp = Effect.gen(function*() {
    const provider = yield* ScriptedProvider
    const rt = yield* runtimeProject(provider)
    const pool = (name: string, options: { readonly protectedPool: boolean; readonly env?: Record<string, string> }) =>
      localPool(rt, name, options, poolIds)
    return { provider, rt, pool }
  })

  it.effect("a hung daemon's machine is deleted by a protected pool and kept offline by another; an ended one is deleted at once", () =>
    Effect.gen(function*() {
      const { pool, rt } = yield* setUp
      const guarded = yield* agentOnPool(rt, yield* pool("protected", { protectedPool: true }))
      const unguarded = yield* agentOnPool(rt, yield* pool("unprotected", { protectedPool: false }))
      // Both daemons hang at once: their processes stay (the provider runs them), silent.
      for (const { machine } of [guarded, unguarded]) signal(machine.id, "STOP")
      // 30 s without a sign of life, the protected pool deletes its machine.
      yield* eventually(guarded.machineOf, (machine) => machine?.status === "deleted", "the protected machine deleted", "90 seconds")
      // The other goes offline (its last heartbeat may have been later) and stays so, sweep after sweep.
      yield* eventually(unguarded.machineOf, (machine) => machine?.status === "offline", "the unprotected machine offline", "30 seconds")
      yield* Effect.sleep("6 seconds")
      expect((yield* unguarded.machineOf)?.status).toBe("offline")
      const deleted = yield* guarded.machineOf
      expect(deleted!.updated_at.getTime() - deleted!.last_seen_at.getTime()).toBeGreaterThanOrEqual(30_000)
      expect(yield* failureOf(guarded.machine.id)).toBe("its daemon stopped answering (runtime protection)")

      // The unprotected machine's daemon now ends: the provider no longer runs it, and it goes within seconds.
      signal(unguarded.machine.id, "KILL")
      yield* eventually(unguarded.machineOf, (machine) => machine?.status === "deleted", "the ended machine deleted", "20 seconds")
      expect(yield* failureOf(unguarded.machine.id)).toMatch(/^its daemon ended: its daemon process was killed by SIGKILL/)
    }), { timeout: 180_000 })

  it.effect("a daemon that exits before it registers: its machine is deleted within seconds, its call fails with the daemon's output", () =>
    Effect.gen(function*() {
      const { pool, provider, rt } = yield* setUp
      const broken = yield* pool("broken", { protectedPool: false, env: { NODE_OPTIONS: "--require /no-such-module-for-this-test" } })
      const { call, elapsedMs, results } = yield* firstCommandOnPool(provider, rt, broken.id)
      // Far sooner than the registration timeout (120 s) or the wait for an offline machine (60 s).
      expect(elapsedMs).toBeLessThan(30_000)
      expect([call.state, call.outcome]).toEqual(["completed", "failed"])
      expect(results.join("\n")).toContain("its daemon ended before it registered: its daemon process exited with code 1")
      expect(results.join("\n")).toContain("Cannot find module '/no-such-module-for-this-test'")
      const machines = yield* rt.client.machines.list({ params: { orgID: rt.org.id }, query: {} })
      expect(machines.data.filter((machine) => machine.name.startsWith("broken-"))).toEqual([])
    }), { timeout: 120_000 })
})
