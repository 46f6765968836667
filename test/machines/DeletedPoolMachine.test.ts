/**
 * A pool machine deleted through the API (docs/machine-pools.md, "Deletion"), on a `local` pool:
 * its row stays as a record, listed with `?status=deleted`, but the routes that would ask its
 * daemon are 404 `not_found`, as for a machine deleted through the API, not
 * `daemon_runtime_unregistered`: no daemon of it will come back.
 */
import { expect, layer } from "@effect/vitest"
import { HttpClientRequest } from "effect/http"
import { Effect } from "effect"
import { afterAll } from "vitest"
import { killDaemonsNaming, LocalPoolServerLive } from "../support/LocalPoolServer.ts"
import { eventually } from "../support/Polling.ts"
import { agentOnPool, localPool } from "../support/PoolAgents.ts"
import { runtimeProject } from "../support/RuntimeProject.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"
import { rawRequest } from "../support/TestApp.ts"

const poolIds: Array<string> = []

afterAll(() => killDaemonsNaming(poolIds))

layer(LocalPoolServerLive, { timeout: "240 seconds", excludeTestServices: true })("machine pools: a deleted machine", (it) => {
  it.effect("its files route is 404 not_found, reading and writing, while it is listed as deleted", () =>
    Effect.gen(function*() {
      const rt = yield* runtimeProject(yield* ScriptedProvider)
      const pool = yield* localPool(rt, "gone", { protectedPool: false }, poolIds)
      const { machine, machineOf } = yield* agentOnPool(rt, pool)
      yield* rt.client.machines.remove({ params: { orgID: rt.org.id, machineID: machine.id } })
      yield* eventually(machineOf, (found) => found.status === "deleted", "the machine deleted", "30 seconds")
      const deleted = yield* rt.client.machines.list({ params: { orgID: rt.org.id }, query: { status: "deleted" } })
      expect(deleted.data.map((found) => found.id)).toEqual([machine.id])

      const files = `/v1/orgs/${rt.org.id}/machines/${machine.id}/files?path=/x`
      const read = yield* rawRequest(HttpClientRequest.get(files).pipe(HttpClientRequest.bearerToken(rt.owner.token)))
      const written = yield* rawRequest(HttpClientRequest.put(files).pipe(
        HttpClientRequest.bearerToken(rt.owner.token),
        HttpClientRequest.bodyJsonUnsafe({ content: "x" })
      ))
      for (const answer of [read, written]) {
        expect(answer.status).toBe(404)
        expect(answer.json).toEqual({ code: "not_found", error: `Machine ${machine.id} was deleted; its files went with it` })
      }
    }), { timeout: 180_000 })
})
