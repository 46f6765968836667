/**
 * The server and the CLI as processes: health, SIGTERM (drain, exit 0, the embedded database
 * closed cleanly), restarts (persistence, bootstrap idempotence), the data directory lock, a
 * key made by the CLI used against the server, and the CLI refusing a configuration as the
 * server does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { request } from "node:http"
import { join } from "node:path"
import {
  failureOf,
  killLeftoverServers,
  makeDataDir,
  makeTemplateDataDir,
  removeDataDir,
  runCli,
  startServer,
  usesEmbeddedDatabase,
  withClient
} from "../support/Processes.ts"

const describeServers = usesEmbeddedDatabase ? describe.concurrent : describe

const PROCESS_TEST_TIMEOUT_MS = 240_000
/** SIGTERM must end the process this soon once nothing is in flight. */
const PROMPT_EXIT_MS = 5_000

const dataDirs: Array<string> = []
let template: string
beforeAll(async () => {
  template = await makeTemplateDataDir()
  dataDirs.push(template)
}, PROCESS_TEST_TIMEOUT_MS)
afterAll(() => {
  killLeftoverServers()
  dataDirs.forEach(removeDataDir)
})
const newDataDir = () => {
  const dir = makeDataDir(template)
  dataDirs.push(dir)
  return dir
}

const uniqueEmail = (label: string) => `${label}-${randomBytes(6).toString("hex")}@example.test`
const newToken = () => `e2e-${randomBytes(16).toString("hex")}`

/**
 * The state recorded in the embedded database's pg_control: 1 is "shut down" (closed cleanly),
 * 6 "in production" (open, or killed without closing).
 */
const CLUSTER_SHUT_DOWN = 1
const clusterState = (dataDir: string) => readFileSync(join(dataDir, "pg", "global", "pg_control")).readUInt32LE(16)

/**
 * POST /v1/orgs whose body arrives in two parts: the request is in flight between `sendStart`
 * and `finish`. Resolves with the status and body.
 */
const slowCreateOrganization = (port: number, token: string, name: string) => {
  const body = JSON.stringify({ name })
  let finish = () => {}
  const response = new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const req = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/v1/orgs",
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        authorization: `Bearer ${token}`
      }
    }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
    })
    req.on("error", reject)
    req.write(body.slice(0, 4))
    finish = () => req.end(body.slice(4))
  })
  return { response, finish: () => finish() }
}

const within = <A>(promise: Promise<A>, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms))
  ])

// Concurrent only on the embedded database, where each test has its own data directory: on
// Postgres the tests share the file's database, where their servers would form one cluster and run
// each other's turns (docs/scale-out.md), which the restarts here would disturb.
describeServers("the server process", () => {
  it("answers health probes; SIGTERM drains the in-flight request and exits 0; data and the bootstrap key survive restarts", async () => {
    const dataDir = newDataDir()
    const bootstrap = { AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("admin") }
    const firstToken = newToken()

    const first = await startServer(dataDir, { ...bootstrap, AGENT_PLATFORM_BOOTSTRAP_TOKEN: firstToken })
    expect(await withClient(first.baseUrl, undefined, (client) => client.health.live())).toEqual({ status: "ok" })
    expect(await withClient(first.baseUrl, undefined, (client) => client.health.ready())).toEqual({ status: "ready" })
    const admin = await withClient(first.baseUrl, firstToken, (client) => client.user.get())
    expect(admin.email).toBe(bootstrap.AGENT_PLATFORM_BOOTSTRAP_EMAIL)
    const kept = await withClient(
      first.baseUrl,
      firstToken,
      (client) => client.organizations.create({ payload: { name: "Kept" } })
    )

    // SIGTERM while a request is in flight: it completes, then the process exits 0.
    const inFlight = slowCreateOrganization(first.port, firstToken, "Drained")
    await new Promise((resolve) => setTimeout(resolve, 200))
    const stopped = first.stop()
    await new Promise((resolve) => setTimeout(resolve, 300))
    inFlight.finish()
    const drained = await inFlight.response
    expect(drained.status).toBe(201)
    expect(drained.body.name).toBe("Drained")
    const exit = await within(stopped, PROMPT_EXIT_MS, "exit after SIGTERM")
    expect(exit).toEqual({ code: 0, signal: null })
    if (usesEmbeddedDatabase) {
      expect(clusterState(dataDir)).toBe(CLUSTER_SHUT_DOWN)
      expect(existsSync(join(dataDir, "pg.lock"))).toBe(false)
    }

    // Same token: the same user, still exactly one bootstrap key, and both organizations.
    const second = await startServer(dataDir, { ...bootstrap, AGENT_PLATFORM_BOOTSTRAP_TOKEN: firstToken })
    await withClient(second.baseUrl, firstToken, (client) =>
      Effect.gen(function*() {
        expect((yield* client.user.get()).id).toBe(admin.id)
        const keys = yield* client.user.listApiKeys({ query: {} })
        expect(keys.data.map((key) => key.name)).toEqual(["bootstrap"])
        expect((yield* client.organizations.get({ params: { orgID: kept.id } })).name).toBe("Kept")
        const orgs = yield* client.organizations.list({ query: {} })
        expect(orgs.data.map((org) => org.name).sort()).toEqual(["Drained", "Kept"])
      }))
    expect(await within(second.stop(), PROMPT_EXIT_MS, "exit after SIGTERM")).toEqual({ code: 0, signal: null })

    // A changed token replaces the old one, which stops working.
    const secondToken = newToken()
    const third = await startServer(dataDir, { ...bootstrap, AGENT_PLATFORM_BOOTSTRAP_TOKEN: secondToken })
    await withClient(third.baseUrl, secondToken, (client) =>
      Effect.gen(function*() {
        expect((yield* client.user.get()).id).toBe(admin.id)
        const keys = yield* client.user.listApiKeys({ query: {} })
        expect(keys.data.map((key) => key.name)).toEqual(["bootstrap"])
      }))
    const revoked = await failureOf(third.baseUrl, firstToken, (client) => client.user.get())
    expect(revoked._tag).toBe("Unauthorized")
    expect(await within(third.stop(), PROMPT_EXIT_MS, "exit after SIGTERM")).toEqual({ code: 0, signal: null })
  }, PROCESS_TEST_TIMEOUT_MS)

  it("a user and key made by the CLI work against the server; the embedded database is locked while the server runs", async () => {
    const dataDir = newDataDir()
    const email = uniqueEmail("cli")

    const created = await runCli(["create-user", "--email", email, "--key-name", "laptop"], dataDir)
    expect(created.stderr).toBe("")
    expect(created.code).toBe(0)
    const token = /^token\s+(\S+)$/m.exec(created.stdout)?.[1]
    expect(token).toMatch(/^apk_[A-Za-z0-9_-]{43}$/)
    expect(created.stdout).toMatch(/^user\s+usr_[a-z2-7]{26} <.+>$/m)

    const again = await runCli(["create-user", "--email", email], dataDir)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`A user with e-mail ${email} exists already`)

    const server = await startServer(dataDir)
    const user = await withClient(server.baseUrl, token, (client) => client.user.get())
    expect(user.email).toBe(email)
    const keys = await withClient(server.baseUrl, token, (client) => client.user.listApiKeys({ query: {} }))
    expect(keys.data.map((key) => key.name)).toEqual(["laptop"])

    if (usesEmbeddedDatabase) {
      const serverPid = Number(readFileSync(join(dataDir, "pg.lock"), "utf8"))
      const cliWhileServing = await runCli(["create-api-key", "--email", email, "--name", "second"], dataDir)
      expect(cliWhileServing.code).toBe(1)
      expect(cliWhileServing.stderr).toContain(`is in use by process ${serverPid}`)
      expect(cliWhileServing.stderr).toContain("DATABASE_URL")
    } else {
      // A second server on the same Postgres database joins the first (docs/scale-out.md) and serves the same data.
      const second = await startServer(dataDir)
      expect((await withClient(second.baseUrl, token, (client) => client.user.get())).id).toBe(user.id)
      expect(await within(second.stop(), PROMPT_EXIT_MS, "exit after SIGTERM")).toEqual({ code: 0, signal: null })
    }
    // The server was not disturbed.
    expect((await withClient(server.baseUrl, token, (client) => client.user.get())).id).toBe(user.id)
    expect(await within(server.stop(), PROMPT_EXIT_MS, "exit after SIGTERM")).toEqual({ code: 0, signal: null })
  }, PROCESS_TEST_TIMEOUT_MS)

  it("the CLI refuses a configuration the server refuses, with the server's one line and exit code 1", async () => {
    const dataDir = newDataDir()
    // A bad variable (every one is read the same way), a DATABASE_URL that is not one, a malformed key.
    const refusals: ReadonlyArray<readonly [Record<string, string>, string]> = [
      [{ PORT: "99999" }, `configuration: (Invalid data at PORT: "Expected a network port value but received "99999"")`],
      [
        { DATABASE_URL: "garbage" },
        `configuration: (Invalid data at DATABASE_URL: "must be a URL such as postgres://user:password@host:5432/database")`
      ],
      [
        { AGENT_PLATFORM_SECRET_KEY: "short" },
        "AGENT_PLATFORM_SECRET_KEY must be 32 bytes written as 64 hex characters or as base64 (generate one with: openssl rand -base64 32)"
      ]
    ]
    // One after another: the other tests of this file run their processes meanwhile.
    for (const [env, line] of refusals) {
      const { code, stderr, stdout } = await runCli(["migrate"], dataDir, env)
      expect({ env, code, stderr, stdout }).toEqual({ env, code: 1, stderr: `${line}\n`, stdout: "" })
    }
  }, PROCESS_TEST_TIMEOUT_MS)
})
