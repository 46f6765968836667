/**
 * What a machine pool's provider says that the database cannot store (docs/runtime.md, "Text the
 * platform receives"), each such character kept as U+FFFD:
 *
 * - a `local` pool's daemon that exits before it registers, having printed a NUL and enough
 *   four-byte characters that the ending quoted (its last 1,000 UTF-16 code units) begins with the
 *   second half of a pair. Its machine is deleted within seconds and the call waiting for it fails
 *   with the end of that output. Without the replacement the machine's row could not keep why it
 *   ended, the pool's sweep failed every time, and the agent stayed `running`;
 * - a `docker` pool whose Docker Engine (a double over real HTTP) refuses to create the
 *   container with a message holding a NUL and cut (at 300 characters) within a pair: the call
 *   fails at once with that message.
 */
import { expect, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect, Redacted } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll } from "vitest"
import { killDaemonsNaming, LocalPoolServerLive } from "../support/LocalPoolServer.ts"
import { firstCommandOnPool, localPool } from "../support/PoolAgents.ts"
import { commandConfig, runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"

const poolIds: Array<string> = []

afterAll(() => killDaemonsNaming(poolIds))

/** U+FFFD, what takes the place of each character that cannot be stored. */
const R = "\ufffd"

/**
 * Run before the daemon (NODE_OPTIONS `--import` of a data: URL, no space in it): prints 600
 * emoji (1,200 code units) on a line, then `bad`, a NUL, `byte`, and exits with code 1.
 */
const PRINT_AND_EXIT = "process.stderr.write(String.fromCodePoint(128512).repeat(600)+String.fromCharCode(10)+'bad'+" +
  "String.fromCharCode(0)+'byte'+String.fromCharCode(10));process.exit(1)"

/** Why the pool deleted each of its machines, as their rows keep it. */
const failuresOf = (poolId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ failure: string | null }>`SELECT failure FROM machines WHERE machine_pool_id = ${poolId}`, (rows) =>
      rows.map((row) => row.failure)))

/**
 * A Docker Engine double on loopback: no container listed, every container creation refused with
 * 404 and `message`, anything else 404.
 */
const refusingDocker = (message: string) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Server; readonly host: string }>((resume) => {
      const server = createServer((request, response) => {
        const json = (status: number, body: unknown) => {
          response.writeHead(status, { "content-type": "application/json" })
          response.end(JSON.stringify(body))
        }
        const url = request.url ?? ""
        if (request.method === "GET" && url.startsWith("/containers/json")) return json(200, [])
        if (request.method === "POST" && url.startsWith("/containers/create")) return json(404, { message })
        return json(404, { message: "page not found" })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ server, host: `tcp://127.0.0.1:${(server.address() as AddressInfo).port}` })))
    }),
    ({ server }) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  )

layer(LocalPoolServerLive, { timeout: "180 seconds", excludeTestServices: true })("pool machine output the database cannot store", (it) => {
  it.effect("a daemon that prints a NUL and exits before it registers: its call fails within seconds with U+FFFD in its output", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const pool = yield* localPool(
        rt,
        "printer",
        { protectedPool: false, env: { NODE_OPTIONS: `--import=data:text/javascript,${PRINT_AND_EXIT}` } },
        poolIds
      )
      const { call, elapsedMs, results: result } = yield* firstCommandOnPool(provider, rt, pool.id)
      // Far sooner than the registration timeout (120 s) or the wait for an offline machine (60 s).
      expect(elapsedMs).toBeLessThan(30_000)
      expect([call.state, call.outcome]).toEqual(["completed", "failed"])
      // The ending quotes the output's last 1,000 code units: the first is the second half of a pair.
      const ending = `its daemon process exited with code 1; its output ended with:\n…${R}${"😀".repeat(495)}\nbad${R}byte`
      expect(result).toHaveLength(1)
      expect(result[0]).toContain(`its daemon ended before it registered: ${ending}`)
      expect(yield* failuresOf(pool.id)).toEqual([`its daemon ended before it registered: ${ending}`])
    }), { timeout: 120_000 })

  it.effect("a Docker Engine refusing a container with a NUL in its message, cut within a pair: the call fails at once with U+FFFD there", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const orgPath = { orgID: rt.org.id }
      // 299 UTF-16 code units, then a pair: the first 300 end with its first half.
      const refusal = `No\u0000such image: ${"a".repeat(284)}😀 and more`
      const docker = yield* refusingDocker(refusal)
      const auth = yield* rt.client.secrets.create({ params: orgPath, payload: { name: "Docker auth", value: Redacted.make("unused") } })
      const pool = yield* rt.client.machinePools.create({
        params: orgPath,
        payload: {
          name: "refused",
          provider: "docker",
          provider_auth_secret_id: auth.id,
          provider_config: { host: docker.host },
          default_machine_provider_options: { image: "node:22" },
          max_total_machines: 1,
          default_machine_cpu: 1,
          default_machine_memory_mb: 512,
          max_total_cpu: 1,
          max_total_memory_mb: 512
        }
      })
      poolIds.push(pool.id)
      yield* rt.client.machinePools.createGrant({ params: { orgID: rt.org.id, poolID: pool.id }, payload: { target_project_id: rt.project.id } })
      const config = yield* commandConfig(rt, { pool: pool.id })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* provider.script([Reply.toolCall("run_command", { command: "true" }), Reply.text("Done.")], { model: rt.slug })
      yield* rt.send(agent.id, "Run it")
      yield* rt.idle(agent.id, "60 seconds")
      const [call] = yield* rt.toolCalls(agent.id)
      expect([call.state, call.outcome]).toEqual(["completed", "failed"])
      const said = `the image node:22 is not on the Docker host (No${R}such image: ${"a".repeat(284)}${R})`
      const result = (yield* rt.events(agent.id)).flatMap((event) =>
        event.event_kind === "tool_result" ? event.content_blocks.map((block) => (block as { text: string }).text) : []
      )
      expect(result).toHaveLength(1)
      expect(result[0]).toContain(said)
      expect(yield* failuresOf(pool.id)).toEqual([expect.stringContaining(said)])
    }), { timeout: 120_000 })
})
