/**
 * A machine's daemon connected to one server process, used through another (docs/scale-out.md,
 * "Machine connections"): two server processes on one Postgres, a real daemon connected to the
 * first. Through the second: the files route writes and reads through the daemon (the request
 * stored there reaches the first process's connection, the result the first stores reaches the
 * second's waiter), a daemon token's revocation and then the machine's deletion close the daemon's
 * connection on the first, saying why. Each change is signalled between the processes
 * (EventNotifications); the polls that remain the safety net would deliver them too, later, so
 * how soon is measured by the benchmark (bench/machines.ts), not here.
 *
 * Postgres only: the embedded database is one process.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { Client } from "../../src/api/Client.ts"
import type { MachineId, OrgId } from "../../src/domain/shared/Ids.ts"
import { waitForShards } from "../support/ClusterShards.ts"
import { daemonDirs, type DaemonProcess, killDaemons, startDaemon } from "../support/Daemons.ts"
import { eventually } from "../support/Polling.ts"
import { type ServerProcess, startServer, usesEmbeddedDatabase, withClient } from "../support/Processes.ts"
import { serverProcesses } from "../support/ServerProcesses.ts"
import { uniqueEmail } from "../support/TestApp.ts"

const TIMEOUT_MS = 180_000
/** The process the daemon connects to, and the one it is used through. */
const DAEMON_SIDE = 0
const OTHER_SIDE = 1

describe.skipIf(usesEmbeddedDatabase)("a machine used through another process (Postgres only)", () => {
  const processes = serverProcesses(TIMEOUT_MS, killDaemons)
  let servers: Array<ServerProcess> = []
  let token: string
  let orgID: OrgId

  const on = <A, E>(index: number, f: (client: Client) => Effect.Effect<A, E>) => withClient(servers[index].baseUrl, token, f)

  /** A daemon of a new daemon token connected to DAEMON_SIDE, serving `work`: it, its machine and the token's id. */
  const connectedDaemon = async (name: string) => {
    const daemonToken = await on(OTHER_SIDE, (client) =>
      client.machines.createDaemonToken({ params: { orgID }, payload: { name } }))
    const dirs = daemonDirs()
    const work = join(dirs.root, "work")
    mkdirSync(work)
    const daemon = startDaemon({ server: servers[DAEMON_SIDE].baseUrl, token: daemonToken.token, name, dirs: [work], state: dirs.state })
    const machine = await on(OTHER_SIDE, (client) =>
      eventually(
        client.machines.list({ params: { orgID }, query: { status: "online" } }).pipe(
          Effect.map((page) => page.data.find((listed) => listed.name === name))
        ),
        (found) => found !== undefined,
        `the daemon ${name} online`,
        "30 seconds"
      ))
    return { daemon, machineId: machine!.id as MachineId, tokenId: daemonToken.id, work }
  }

  const closedWith = (daemon: DaemonProcess, reason: string) =>
    Effect.runPromise(eventually(
      Effect.sync(() => daemon.output()),
      (output) => output.includes(`the server closed the connection: ${reason}`),
      `the daemon told ${reason}`,
      "30 seconds"
    ))

  beforeAll(async () => {
    token = `machines-${randomBytes(16).toString("hex")}`
    const env = {
      AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
      AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("machines"),
      AGENT_PLATFORM_SECRET_KEY: randomBytes(32).toString("base64")
    }
    servers = await Promise.all([DAEMON_SIDE, OTHER_SIDE].map(() => startServer(processes.dataDir(), env)))
    await waitForShards(process.env.DATABASE_URL!, servers.length)
    orgID = (await on(OTHER_SIDE, (client) => client.organizations.create({ payload: { name: "Machines" } }))).id
  }, TIMEOUT_MS)

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
  })

  it("the files route through the other process; a revoked token and a deleted machine close the connection", async () => {
    const { daemon, machineId, tokenId, work } = await connectedDaemon("across")
    const params = { orgID, machineID: machineId }
    const file = join(work, "across.txt")
    const content = "written through the other process\n"
    const written = await on(OTHER_SIDE, (client) =>
      client.machines.writeFile({ params, query: { path: file }, payload: { content } }))
    expect(written).toMatchObject({ created: true, size: content.length })
    expect(readFileSync(file, "utf8")).toBe(content)
    const read = await on(OTHER_SIDE, (client) => client.machines.readFile({ params, query: { path: file } }))
    expect(read).toMatchObject({ path: file, content, digest: written.digest })

    // The token revoked through the other process: the daemon's connection closes, and the daemon stops.
    await on(OTHER_SIDE, (client) => client.machines.removeDaemonToken({ params: { orgID, daemonTokenID: tokenId } }))
    await closedWith(daemon, "revoked")
    expect((await daemon.exited).code).not.toBe(0)

    // The machine deleted through the other process: its new daemon's connection closes.
    const second = await connectedDaemon("deleted")
    await on(OTHER_SIDE, (client) => client.machines.remove({ params: { orgID, machineID: second.machineId } }))
    await closedWith(second.daemon, "machine_deleted")
  }, TIMEOUT_MS)
})
