/**
 * Start-up and shutdown as an operator sees them, with the server as a real process: an empty
 * DATABASE_URL is the embedded database, the first log line says where the docs and the
 * database are, a port in use stops the process with one line before DATA_DIR exists, shutdown
 * says what it drains and stays quiet about the workflow engine, a terminal's Ctrl-C (which npm
 * forwards again) shuts down once and cleanly, DATA_DIR is private (0700, files 0600) under a
 * permissive umask while an operator's own files in it keep their modes, and a DATA_DIR that
 * cannot be created or a DATABASE_URL that is not one is one line. Each request is one log line
 * with its `x-request-id`; an event stream's is written when the stream ends (a HEAD's at once);
 * a request its client abandoned is logged 499.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { connect, createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  killLeftoverServers,
  makeDataDir,
  makeTemplateDataDir,
  removeDataDir,
  startServer,
  usesEmbeddedDatabase,
  withClient
} from "../support/Processes.ts"
import { daemonDirs, killDaemons, startDaemon } from "../support/Daemons.ts"
import { until } from "../support/Polling.ts"
import { scriptedProject } from "../support/ScriptedModel.ts"
import { Reply, type ScriptedProviderShape, startScriptedProvider } from "../support/ScriptedProvider.ts"
import { uniqueEmail } from "../support/TestApp.ts"

const describeServers = usesEmbeddedDatabase ? describe.concurrent : describe
const TIMEOUT_MS = 240_000

let template: string
const dataDirs: Array<string> = []
let provider: ScriptedProviderShape
let closeProvider: () => Promise<void>

beforeAll(async () => {
  template = await makeTemplateDataDir()
  dataDirs.push(template)
  const started = await startScriptedProvider()
  provider = started.provider
  closeProvider = started.close
}, TIMEOUT_MS)

afterAll(async () => {
  killDaemons()
  killLeftoverServers()
  dataDirs.forEach(removeDataDir)
  await closeProvider()
})

/** A path for DATA_DIR that does not exist yet. */
const freshDataDirPath = () => {
  const parent = mkdtempSync(join(tmpdir(), "agent-platform-startup-"))
  dataDirs.push(parent)
  return join(parent, "data")
}

const logLines = (output: string) =>
  output.split("\n").filter((line) => line.startsWith("{")).map((line) =>
    JSON.parse(line) as { message: string; logLevel: string; annotations: Record<string, unknown> }
  )

/** The annotations of the request log line with this request id, once the server has written it. */
const requestLine = async (server: { output: () => string }, requestId: string) => {
  const deadline = Date.now() + 10_000
  for (;;) {
    const line = logLines(server.output()).find((line) => line.message === "request" && line.annotations.request_id === requestId)
    if (line !== undefined) return line.annotations
    if (Date.now() > deadline) throw new Error(`no request log line for ${requestId}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Every path under `dir` with its permission bits. */
const modesUnder = (dir: string): Array<readonly [string, number]> => {
  const found: Array<readonly [string, number]> = []
  const pending = [dir]
  while (pending.length > 0) {
    const path = pending.pop()!
    const stats = statSync(path)
    found.push([path, stats.mode & 0o777])
    if (stats.isDirectory()) for (const name of readdirSync(path)) pending.push(join(path, name))
  }
  return found
}

describeServers("start-up and shutdown", () => {
  it("an empty DATABASE_URL is the embedded database; the start-up line names it and the docs", async () => {
    const dataDir = makeDataDir(template)
    dataDirs.push(dataDir)
    const server = await startServer(dataDir, { DATABASE_URL: "" })
    try {
      const listening = logLines(server.output()).find((line) => line.message.startsWith("Listening on"))!
      expect(listening.message).toBe(
        `Listening on ${server.baseUrl}; API docs at ${server.baseUrl}/docs, OpenAPI at ${server.baseUrl}/v1/openapi.json; ` +
          `database: embedded PGlite in ${join(dataDir, "pg")}`
      )
      const root = await fetch(`${server.baseUrl}/`).then((response) => response.json())
      expect(root).toMatchObject({ docs: "/docs", openapi: "/v1/openapi.json" })
    } finally {
      expect((await server.stop()).code).toBe(0)
    }
  }, TIMEOUT_MS)

  it("a port in use stops the process at once with one line, before DATA_DIR is created", async () => {
    const occupied: Server = await new Promise((resolve) => {
      const server = createServer()
      server.listen(0, "127.0.0.1", () => resolve(server))
    })
    const port = (occupied.address() as { port: number }).port
    const dataDir = freshDataDirPath()
    try {
      const failure = await startServer(dataDir, { PORT: String(port) }).then(
        () => "started",
        (error: Error) => error.message
      )
      const [summary, ...output] = failure.split("\n")
      expect(summary).toMatch(/^the server exited \([1-9]\d*\) before listening:$/)
      expect(output.filter((line) => line.trim() !== "")).toEqual([`port ${port} is in use; set PORT`])
      expect(existsSync(dataDir)).toBe(false)
    } finally {
      occupied.close()
    }
  }, TIMEOUT_MS)

  it("a cluster pools file that is not valid stops the start-up with one line naming it", async () => {
    const dataDir = makeDataDir(template)
    dataDirs.push(dataDir)
    const file = join(dataDir, "cluster-pools.json")
    writeFileSync(file, `{ "pools": [{ "name": "shared" }] }`)
    const failure = await startServer(dataDir, { AGENT_PLATFORM_CLUSTER_POOLS_FILE: file }).then(
      () => "started",
      (error: Error) => error.message
    )
    const [summary, ...output] = failure.split("\n")
    expect(summary).toMatch(/^the server exited \([1-9]\d*\) before listening:$/)
    const lines = output.filter((line) => line.trim() !== "" && !line.startsWith("{"))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`AGENT_PLATFORM_CLUSTER_POOLS_FILE: ${file} is not a valid cluster pools file`)
    expect(lines[0]).toContain("org_id")
  }, TIMEOUT_MS)

  it("SIGTERM mid-turn: 'shutting down: draining N requests', then 'stopped', no workflow engine warnings", async () => {
    const dataDir = makeDataDir(template)
    dataDirs.push(dataDir)
    const token = `startup-${randomBytes(16).toString("hex")}`
    const slug = `startup-${randomBytes(4).toString("hex")}`
    await Effect.runPromise(provider.script([Reply.hang()], { model: slug }))
    const server = await startServer(dataDir, {
      AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
      AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("startup")
    })
    await withClient(server.baseUrl, token, (client) =>
      Effect.gen(function*() {
        const { configId, projectPath } = yield* scriptedProject(client, { name: "Stop", label: "stop", baseUrl: provider.baseUrl("openai-responses"), slug })
        yield* client.agents.create({
          params: projectPath,
          payload: { agent_config_id: configId, input: { content_blocks: [{ type: "text", text: "wait" }] } }
        })
      }))
    const deadline = Date.now() + 60_000
    while ((await Effect.runPromise(provider.requests)).every((request) => request.body?.model !== slug)) {
      if (Date.now() > deadline) throw new Error("the model call did not start")
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const exit = await server.stop()
    expect(exit.code).toBe(0)
    const messages = logLines(server.output()).map((line) => line.message)
    const draining = messages.findIndex((message) => /^shutting down: draining \d+ requests$/.test(message))
    expect(draining).toBeGreaterThan(0)
    expect(messages.at(-1)).toBe("stopped")
    expect(messages).not.toContain("No healthy runners available")
  }, TIMEOUT_MS)

  it("SIGTERM with a daemon connected and an event stream open: both told server_shutdown before the drain", async () => {
    const dataDir = makeDataDir(template)
    dataDirs.push(dataDir)
    const token = `startup-${randomBytes(16).toString("hex")}`
    const server = await startServer(dataDir, {
      AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
      AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("shutdown-open")
    })
    const { agentPath, orgId } = await withClient(server.baseUrl, token, (client) =>
      Effect.gen(function*() {
        const slug = `shutdown-${randomBytes(4).toString("hex")}`
        const { configId, projectPath } = yield* scriptedProject(client, { name: "Stop", label: "stop", baseUrl: provider.baseUrl("openai-responses"), slug })
        const agent = yield* client.agents.create({ params: projectPath, payload: { agent_config_id: configId } })
        return { agentPath: `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}`, orgId: projectPath.orgID }
      }))
    const dirs = daemonDirs()
    const daemon = startDaemon({ server: server.baseUrl, token, name: "stopping", org: orgId, dirs: [dirs.work], state: dirs.state })
    const connected = /^machine mch_\w+ connected$/
    await until(async () => logLines(server.output()), (lines) => lines.some((line) => connected.test(line.message)), "the daemon connected")
    const stream = await fetch(`${server.baseUrl}${agentPath}/events/stream`, { headers: { authorization: `Bearer ${token}` } })
    expect(stream.status).toBe(200)
    const streamed = stream.text()

    const exit = await server.stop()
    expect(exit.code).toBe(0)
    // The stream ended with its last event, not cut when the drain's grace ran out.
    expect(await streamed).toMatch(/event: stream_closed\ndata: \{"reason":"server_shutdown","message":"The server is stopping; [^"]*"\}\n\n$/)
    const lines = logLines(server.output())
    const messages = lines.map((line) => line.message)
    // The socket's request ended by the close, not cut when the drain's grace ran out (503).
    const socket = lines.find((line) => line.message === "request" && line.annotations.path === "/api/v1/machines/ws")
    expect(socket?.annotations.status).not.toBe(503)
    const draining = messages.findIndex((message) => message.startsWith("shutting down: draining"))
    const disconnected = messages.findIndex((message) => /^machine mch_\w+ disconnected$/.test(message))
    expect(messages[draining]).toBe("shutting down: draining 1 requests")
    expect(disconnected).toBeGreaterThan(draining)
    expect(messages.at(-1)).toBe("stopped")
    // The daemon was told why, and logs a planned stop as information, not as a fault.
    const told = await until(
      async () => logLines(daemon.output()).find((line) => line.message.includes("server_shutdown: the server is stopping")),
      (line) => line !== undefined,
      "the daemon told why"
    )
    expect(told?.logLevel).toBe("INFO")
    await daemon.stop()
  }, TIMEOUT_MS)

  it("one log line a request, with its x-request-id; an event stream's line is written when the stream ends, a HEAD's at once", async () => {
    const dataDir = makeDataDir(template)
    dataDirs.push(dataDir)
    const token = `startup-${randomBytes(16).toString("hex")}`
    const server = await startServer(dataDir, {
      AGENT_PLATFORM_BOOTSTRAP_TOKEN: token,
      AGENT_PLATFORM_BOOTSTRAP_EMAIL: uniqueEmail("request-log")
    })
    try {
      const agentPath = await withClient(server.baseUrl, token, (client) =>
        Effect.gen(function*() {
          const { configId, projectPath } = yield* scriptedProject(client, {
            name: "Log",
            label: "log",
            baseUrl: provider.baseUrl("openai-responses"),
            slug: `log-${randomBytes(4).toString("hex")}`
          })
          const agent = yield* client.agents.create({ params: projectPath, payload: { agent_config_id: configId } })
          return `/v1/orgs/${projectPath.orgID}/projects/${projectPath.projectID}/agents/${agent.id}`
        }))
      const health = await fetch(`${server.baseUrl}/healthz?probe=1`, { headers: { "x-request-id": "log-health" } })
      expect(health.headers.get("x-request-id")).toBe("log-health")
      expect(await requestLine(server, "log-health")).toMatchObject({ method: "GET", path: "/healthz", status: 400 })

      const opened = new AbortController()
      const stream = await fetch(`${server.baseUrl}${agentPath}/events/stream`, {
        headers: { authorization: `Bearer ${token}`, "x-request-id": "log-stream" },
        signal: opened.signal
      })
      expect(stream.status).toBe(200)
      expect(stream.headers.get("x-request-id")).toBe("log-stream")
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(logLines(server.output()).some((line) => line.annotations?.request_id === "log-stream")).toBe(false)
      opened.abort()
      const line = await requestLine(server, "log-stream")
      expect(line).toMatchObject({ method: "GET", path: `${agentPath}/events/stream`, status: 200 })
      expect(line.duration_ms).toBeGreaterThanOrEqual(500)

      // A HEAD's body is never sent: its line is written with its answer.
      const head = await fetch(`${server.baseUrl}${agentPath}/events/stream`, {
        method: "HEAD",
        headers: { authorization: `Bearer ${token}`, "x-request-id": "log-stream-head" }
      })
      expect(head.status).toBe(200)
      expect(await requestLine(server, "log-stream-head")).toMatchObject({
        method: "HEAD",
        path: `${agentPath}/events/stream`,
        status: 200
      })

      // A request its client abandons, its body short of its Content-Length or its chunked framing
      // broken, is logged 499 (client closed request), not as a server error; nothing is sent.
      const port = Number(new URL(server.baseUrl).port)
      const abandon = (requestId: string, headers: string, body: string, closeAfterMs: number) =>
        new Promise<string>((resolve) => {
          let received = ""
          const socket = connect(port, "127.0.0.1", () =>
            socket.write(
              `POST /v1/orgs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
                `Content-Type: application/json\r\nx-request-id: ${requestId}\r\n${headers}\r\n${body}`
            ))
          socket.on("data", (chunk) => received += chunk)
          socket.on("error", () => undefined)
          socket.on("close", () => resolve(received))
          setTimeout(() => socket.destroy(), closeAfterMs)
        })
      expect(await abandon("log-abandoned", "Content-Length: 100\r\n", '{"name":"', 1000)).toBe("")
      const abandoned = await requestLine(server, "log-abandoned")
      expect(abandoned).toMatchObject({ method: "POST", path: "/v1/orgs", status: 499 })
      expect(abandoned.duration_ms).toBeGreaterThanOrEqual(900)
      await abandon("log-broken-chunks", "Transfer-Encoding: chunked\r\n", '9\r\n{"name":"\r\nzz\r\n', 1000)
      expect(await requestLine(server, "log-broken-chunks")).toMatchObject({ method: "POST", path: "/v1/orgs", status: 499 })
    } finally {
      await server.stop()
    }
  }, TIMEOUT_MS)

  it("Ctrl-C in a terminal (SIGINT to npm and the server, then npm's forward of it): one shutdown to 'stopped', exit 0", async () => {
    const dataDir = makeDataDir(template)
    dataDirs.push(dataDir)
    const server = await startServer(dataDir)
    const exit = await server.interrupt()
    expect(exit).toEqual({ code: 0, signal: null })
    expect(logLines(server.output()).map((line) => line.message).at(-1)).toBe("stopped")
    // The embedded database's lock is released, so the next start finds no stale lock.
    expect(existsSync(join(dataDir, "pg.lock"))).toBe(false)
  }, TIMEOUT_MS)

  it("DATA_DIR is 0700 and every file under it 0600, under umask 022 (the embedded database and a generated key)", async () => {
    const dataDir = freshDataDirPath()
    const previous = process.umask(0o022)
    try {
      const server = await startServer(dataDir, { DATABASE_URL: "", AGENT_PLATFORM_SECRET_KEY: "" })
      try {
        const modes = modesUnder(dataDir)
        expect(modes.map(([path]) => path)).toContain(join(dataDir, "secret.key"))
        expect(modes.map(([path]) => path)).toContain(join(dataDir, "pg.lock"))
        const wrong = modes.filter(([path, mode]) => mode !== (statSync(path).isDirectory() ? 0o700 : 0o600))
        expect(wrong.map(([path, mode]) => `${mode.toString(8)} ${path}`)).toEqual([])
      } finally {
        await server.stop()
      }
    } finally {
      process.umask(previous)
    }
  }, TIMEOUT_MS)

  it("an existing DATA_DIR: it and the server's files are made private, the operator's own files keep their modes", async () => {
    const dataDir = freshDataDirPath()
    mkdirSync(join(dataDir, "scripts"), { recursive: true })
    writeFileSync(join(dataDir, "backup.sh"), "#!/bin/sh\n")
    writeFileSync(join(dataDir, "scripts", "notes.txt"), "mine\n")
    chmodSync(join(dataDir, "backup.sh"), 0o755)
    chmodSync(join(dataDir, "scripts", "notes.txt"), 0o644)
    chmodSync(join(dataDir, "scripts"), 0o755)
    chmodSync(dataDir, 0o755)
    const server = await startServer(dataDir, { DATABASE_URL: "", AGENT_PLATFORM_SECRET_KEY: "" })
    try {
      const foreign = [join(dataDir, "backup.sh"), join(dataDir, "scripts"), join(dataDir, "scripts", "notes.txt")]
      const modes = new Map(modesUnder(dataDir))
      expect(foreign.map((path) => modes.get(path)?.toString(8))).toEqual(["755", "755", "644"])
      const wrong = [...modes].filter(([path, mode]) =>
        !foreign.includes(path) && mode !== (statSync(path).isDirectory() ? 0o700 : 0o600)
      )
      expect(wrong.map(([path, mode]) => `${mode.toString(8)} ${path}`)).toEqual([])
      expect(modes.get(dataDir)?.toString(8)).toBe("700")
    } finally {
      await server.stop()
    }
  }, TIMEOUT_MS)

  it("a DATA_DIR that cannot be created (under a regular file) stops the start-up with one line naming it", async () => {
    const parent = freshDataDirPath()
    writeFileSync(parent, "not a directory\n")
    const dataDir = join(parent, "data")
    const failure = await startServer(dataDir, { DATABASE_URL: "", AGENT_PLATFORM_SECRET_KEY: "" }).then(
      () => "started",
      (error: Error) => error.message
    )
    const [summary, ...output] = failure.split("\n")
    expect(summary).toBe("the server exited (1) before listening:")
    expect(output.filter((line) => line.trim() !== "" && !line.startsWith("{"))).toEqual([
      `DATA_DIR: cannot create ${dataDir}: not a directory`
    ])
  }, TIMEOUT_MS)

  it("a DATABASE_URL that is not a postgres:// URL stops the start-up with one line naming it", async () => {
    const dataDir = freshDataDirPath()
    const failure = await startServer(dataDir, { DATABASE_URL: "garbage" }).then(
      () => "started",
      (error: Error) => error.message
    )
    const [summary, ...output] = failure.split("\n")
    expect(summary).toBe("the server exited (1) before listening:")
    expect(output.filter((line) => line.trim() !== "")).toEqual([
      `configuration: (Invalid data at DATABASE_URL: "must be a URL such as postgres://user:password@host:5432/database")`
    ])
  }, TIMEOUT_MS)

  it("a server whose secret key is not the one the database's secrets are encrypted with refuses to start", async () => {
    const dataDir = makeDataDir(template)
    dataDirs.push(dataDir)
    // The embedded database in both runs: the test run's Postgres already knows the test key.
    const withKey = (key: string) => ({ DATABASE_URL: "", AGENT_PLATFORM_SECRET_KEY: key.repeat(64) })
    const first = await startServer(dataDir, withKey("a"))
    expect((await first.stop()).code).toBe(0)
    const failure = await startServer(dataDir, withKey("b")).then(
      () => "started",
      (error: Error) => error.message
    )
    const [summary, ...output] = failure.split("\n")
    expect(summary).toMatch(/^the server exited \([1-9]\d*\) before listening:$/)
    // One plain line besides the JSON logs (the database opened before the key was checked).
    expect(output.filter((line) => line.trim() !== "" && !line.startsWith("{"))).toEqual([
      expect.stringMatching(
        /^the secret key differs from the one this database's secrets are encrypted with \(its fingerprint starts [0-9a-f]{8}, this key's [0-9a-f]{8}\); set AGENT_PLATFORM_SECRET_KEY to that key, the same on every server process$/
      )
    ])
    const again = await startServer(dataDir, withKey("a"))
    expect((await again.stop()).code).toBe(0)
  }, TIMEOUT_MS)
})
