/**
 * The first session of the README, as a newcomer runs it: the server (`npm start`, fresh data
 * directory, a bootstrap token, the `local` machine provider's key, with which the README restarts
 * it for the pool) and the demo model as child processes; the README's bash blocks of "A first
 * session with curl", "Run an agent", "Give an agent a machine" (a real daemon in the background),
 * "Machines from a pool" (a `local` pool machine) and "Workspaces" pasted into bash, with
 * examples/first-agent.ts run where the README names it (before the machine's block), twice in a
 * row: each block and the example must end with status 0 and print nothing on stderr, the second
 * run reusing what the first created.
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
const LOCAL_PROVIDER_KEY = "my-local-key"
const TIMEOUT_MS = 360_000

/** The command the README gives for the typed-client example, and the heading it is under. */
const EXAMPLE = { heading: "### The same with the typed client", command: "npx tsx examples/first-agent.ts" }

/**
 * The bash blocks of the README's first session, pointed at the test's server, demo model and
 * machine directory, with the example's command where its heading is.
 */
const readmeSteps = (serverPort: number, demoBaseUrl: string, workDir: string) => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8")
  const section = readme.slice(readme.indexOf("## A first session with curl"), readme.indexOf("## Admin command line"))
  const exampleAt = section.indexOf(EXAMPLE.heading)
  expect(exampleAt, "the README's typed-client heading").toBeGreaterThan(0)
  expect(section.slice(exampleAt), "the README's typed-client command").toContain(EXAMPLE.command)
  const blocks = [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) => ({
    at: match.index,
    code: match[1]
      .replaceAll("http://127.0.0.1:8787", `http://127.0.0.1:${serverPort}`)
      .replaceAll("http://127.0.0.1:8788/v1", demoBaseUrl)
      .replaceAll(`WORK="$PWD/agent-work"`, `WORK="${workDir}"`)
  }))
  return [...blocks, { at: exampleAt, code: EXAMPLE.command }].sort((a, b) => a.at - b.at).map((step) => step.code)
}

const run = (command: string, args: ReadonlyArray<string>, input: string | undefined, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), 150_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(input ?? "")
  })

describe.skipIf(!usesEmbeddedDatabase)("the README's first session and the examples (embedded database)", () => {
  const dataDirs: Array<string> = []
  let server: ServerProcess
  let dataDir: string
  let demo: Awaited<ReturnType<typeof startDemoModel>>
  // Made in beforeAll: a describe's body runs to collect its tests even when it is skipped.
  let workDir: string

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), "agent-platform-readme-machine-"))
    const template = await makeTemplateDataDir()
    dataDir = makeDataDir(template)
    dataDirs.push(template, dataDir)
    ;[server, demo] = await Promise.all([
      startServer(dataDir, { AGENT_PLATFORM_BOOTSTRAP_TOKEN: TOKEN, AGENT_PLATFORM_LOCAL_PROVIDER_KEY: LOCAL_PROVIDER_KEY }),
      startDemoModel()
    ])
  }, TIMEOUT_MS)

  afterAll(async () => {
    // The README starts the daemon in the background: it outlives the shell that started it; so
    // do the pool's machines, which run under DATA_DIR/machines.
    if (workDir !== undefined) {
      spawnSync("pkill", ["-f", `daemon/main.ts .*--dir ${workDir}`])
      rmSync(workDir, { recursive: true, force: true })
      rmSync(`${workDir}.log`, { force: true })
    }
    if (dataDir !== undefined) spawnSync("pkill", ["-KILL", "-f", join(dataDir, "machines")])
    await server?.stop()
    await demo?.stop()
    killLeftoverServers()
    dataDirs.forEach(removeDataDir)
  })

  it("the README's bash blocks and its example, pasted twice in a row: every step succeeds, the second run reuses what exists", async () => {
    const steps = readmeSteps(server.port, demo.baseUrl, workDir)
    expect(steps.length).toBeGreaterThanOrEqual(6)
    // One shell, as when pasting: each step followed by a line that reports its status.
    const script = steps.map((step, index) => `${step}\necho "@@ step ${index} status $?" >&2\n`).join("\n")
    const env = {
      OPENAI_API_KEY: "sk-not-a-real-key",
      // The daemon keeps its state under XDG_CONFIG_HOME: the test's own, not the user's.
      XDG_CONFIG_HOME: join(workDir, "config"),
      // The example's own defaults are the README's addresses; here the test's.
      AGENT_PLATFORM_URL: server.baseUrl,
      DEMO_MODEL_URL: demo.baseUrl
    }
    for (const round of [1, 2]) {
      const result = await run("bash", [], script, env)
      const statuses = [...result.stderr.matchAll(/@@ step (\d+) status (\d+)/g)].map((match) => Number(match[2]))
      const otherStderr = result.stderr.split("\n").filter((line) => line !== "" && !line.startsWith("@@ step"))
      expect({ round, statuses, otherStderr }).toEqual({ round, statuses: steps.map(() => 0), otherStderr: [] })
      expect(result.stdout).toContain("You said: What is a haiku?")
      expect(result.stdout).toMatch(/event: text_delta\ndata: \{[^\n]*"delta":"You "/)
      expect(result.stdout).toContain("lookup answered: Sunny, 21 C")
      expect(result.stdout, "the approved custom tool's answer").toContain("deploy answered: web deployed")
      expect(result.stdout).toContain("You said: Say hello, slowly")
      expect(result.stdout).toContain("turns: completed, completed")
      expect(result.stdout).toContain('run_command answered: {"exit_code":0,"stdout":"hello from the machine\\n"')
      expect(result.stdout, "the pool machine's answer").toMatch(/run_command answered: \{"exit_code":0,"stdout":"Linux [^\n]*\/machines\/mpo_/)
      expect(result.stdout, "the pool's usage").toContain('{"machines":1,')
      expect(result.stdout, "the workspace session's answer").toContain('run_command answered: {"exit_code":0,"stdout":"## fix-typo\\n"')
      if (round === 2) expect(result.stdout, "the API key is created once").not.toContain('"token":"apk_')
    }
    const orgs = await withClient(server.baseUrl, TOKEN, (client) => client.organizations.list({ query: {} }))
    expect(orgs.data.map((org) => org.name)).toEqual(["Acme"])
    const [org] = orgs.data
    const providers = await withClient(server.baseUrl, TOKEN, (client) =>
      client.modelProviderConfigs.list({ params: { orgID: org.id }, query: {} }))
    expect(providers.data.map((provider) => provider.name).sort()).toEqual(["demo", "openai"])
    const agents = await withClient(server.baseUrl, TOKEN, (client) =>
      Effect.flatMap(client.projects.list({ params: { orgID: org.id }, query: {} }), (page) =>
        client.agents.list({ params: { orgID: org.id, projectID: page.data[0].id }, query: { limit: 100 } })))
    // One organization: the example works in the README's, so the personal machine's daemon needs no --org.
    const isSession = (agent: { readonly metadata: object }) => "workspace_session_id" in agent.metadata
    expect(agents.data.filter((agent) => !isSession(agent)).map((agent) => agent.name).sort())
      .toEqual(["deployer", "first-agent", "first-agent", "helper", "helper-openai", "operator", "sandboxed"])
    expect(agents.data.filter(isSession), "a workspace session's agent a round").toHaveLength(2)
  }, TIMEOUT_MS)

  it("a turn that fails: the README's helpers say why and its block fails, instead of printing an earlier answer", async () => {
    // DEMO_MODEL changed to an address where nothing listens: the block points the provider there, and the turn fails.
    const steps = readmeSteps(server.port, "http://127.0.0.1:9/v1", workDir)
    const runAgent = steps.findIndex((step) => step.includes("What is a haiku?"))
    expect(runAgent, "the README's Run an agent block").toBeGreaterThan(0)
    const result = await run("bash", [], [...steps.slice(0, 2), steps[runAgent]].join("\n"), {})
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/^its latest turn failed: The model provider failed: Could not reach the model provider: connect ECONNREFUSED/m)
    expect(result.stdout).not.toContain("You said:")
  }, TIMEOUT_MS)
})
