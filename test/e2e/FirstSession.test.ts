/**
 * The first session of the README and examples/first-agent.ts, as a newcomer runs them: the
 * server (`npm start`, fresh data directory, a bootstrap token) and the demo model as child
 * processes; the README's bash blocks of "A first session with curl", "Run an agent" and "Give an agent a
 * machine" (a real daemon in the background) pasted
 * into bash twice in a row (each block must end with status 0 and print nothing on stderr, the
 * second run reusing what the first created); then the typed-client example script.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startDemoModel } from "../support/DemoModelProcess.ts"
import {
  killLeftoverServers,
  makeDataDir,
  makeTemplateDataDir,
  removeDataDir,
  type ServerProcess,
  startServer,
  usesEmbeddedDatabase,
  withClient
} from "../support/Processes.ts"
import { Effect } from "effect"

const ROOT = join(import.meta.dirname, "..", "..")
const TOKEN = "my-admin-token"
const TIMEOUT_MS = 240_000

/** The bash blocks of the README's first session, pointed at the test's server, demo model and machine directory. */
const readmeBlocks = (serverPort: number, demoBaseUrl: string, workDir: string) => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8")
  const section = readme.slice(readme.indexOf("## A first session with curl"), readme.indexOf("## Admin command line"))
  return [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) =>
    match[1]
      .replaceAll("http://127.0.0.1:8787", `http://127.0.0.1:${serverPort}`)
      .replaceAll("http://127.0.0.1:8788/v1", demoBaseUrl)
      .replaceAll(`WORK="$PWD/agent-work"`, `WORK="${workDir}"`)
  )
}

const run = (command: string, args: ReadonlyArray<string>, input: string | undefined, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(input ?? "")
  })

describe.skipIf(!usesEmbeddedDatabase)("the README's first session and the examples (embedded database)", () => {
  const dataDirs: Array<string> = []
  let server: ServerProcess
  let demo: Awaited<ReturnType<typeof startDemoModel>>
  const workDir = mkdtempSync(join(tmpdir(), "agent-platform-readme-machine-"))

  beforeAll(async () => {
    const template = await makeTemplateDataDir()
    const dataDir = makeDataDir(template)
    dataDirs.push(template, dataDir)
    ;[server, demo] = await Promise.all([startServer(dataDir, { AGENT_PLATFORM_BOOTSTRAP_TOKEN: TOKEN }), startDemoModel()])
  }, TIMEOUT_MS)

  afterAll(async () => {
    // The README starts the daemon in the background: it outlives the shell that started it.
    spawnSync("pkill", ["-f", `daemon/main.ts .*--dir ${workDir}`])
    rmSync(workDir, { recursive: true, force: true })
    rmSync(`${workDir}.log`, { force: true })
    await server?.stop()
    await demo?.stop()
    killLeftoverServers()
    dataDirs.forEach(removeDataDir)
  })

  it("the README's bash blocks, pasted twice in a row: every block succeeds, the second run reuses what exists", async () => {
    const blocks = readmeBlocks(server.port, demo.baseUrl, workDir)
    expect(blocks.length).toBeGreaterThanOrEqual(5)
    // One shell, as when pasting: each block followed by a line that reports its status.
    const script = blocks.map((block, index) => `${block}\necho "@@ block ${index} status $?" >&2\n`).join("\n")
    // The daemon keeps its state under XDG_CONFIG_HOME: the test's own, not the user's.
    const env = { OPENAI_API_KEY: "sk-not-a-real-key", XDG_CONFIG_HOME: join(workDir, "config") }
    for (const round of [1, 2]) {
      const result = await run("bash", [], script, env)
      const statuses = [...result.stderr.matchAll(/@@ block (\d+) status (\d+)/g)].map((match) => Number(match[2]))
      const otherStderr = result.stderr.split("\n").filter((line) => line !== "" && !line.startsWith("@@ block"))
      expect({ round, statuses, otherStderr }).toEqual({ round, statuses: blocks.map(() => 0), otherStderr: [] })
      expect(result.stdout).toContain("You said: What is a haiku?")
      expect(result.stdout).toMatch(/event: text_delta\ndata: \{[^\n]*"delta":"You "/)
      expect(result.stdout).toContain("lookup answered: Sunny, 21 C")
      expect(result.stdout).toContain('run_command answered: {"exit_code":0,"stdout":"hello from the machine\\n"')
      if (round === 2) expect(result.stdout, "the API key is created once").not.toContain('"token":"apk_')
    }
    const orgs = await withClient(server.baseUrl, TOKEN, (client) => client.organizations.list({ urlParams: {} }))
    expect(orgs.data.map((org) => org.name)).toEqual(["Acme"])
    const [org] = orgs.data
    const providers = await withClient(server.baseUrl, TOKEN, (client) =>
      client.modelProviderConfigs.list({ path: { orgID: org.id }, urlParams: {} }))
    expect(providers.data.map((provider) => provider.name).sort()).toEqual(["demo", "openai"])
    const projects = await withClient(server.baseUrl, TOKEN, (client) =>
      Effect.flatMap(client.projects.list({ path: { orgID: org.id }, urlParams: {} }), (page) =>
        client.agents.list({ path: { orgID: org.id, projectID: page.data[0].id }, urlParams: {} })))
    expect(projects.data.map((agent) => agent.name).sort()).toEqual(["helper", "helper-openai", "operator"])
  }, TIMEOUT_MS)

  it("examples/first-agent.ts runs against them, twice", async () => {
    for (let round = 0; round < 2; round++) {
      const result = await run(process.execPath, ["--import", "tsx", "examples/first-agent.ts"], undefined, {
        AGENT_PLATFORM_URL: server.baseUrl,
        AGENT_PLATFORM_TOKEN: TOKEN,
        DEMO_MODEL_URL: demo.baseUrl
      })
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" })
      expect(result.stdout).toContain("You said: Say hello, slowly")
      expect(result.stdout).toContain("lookup answered: Sunny, 21 C")
      expect(result.stdout).toContain("turns: completed, completed")
    }
  }, TIMEOUT_MS)
})
