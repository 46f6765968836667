/**
 * Set-up for the workspace tests: a git repository with one commit in a temp dir, a runtime
 * project whose owner runs a daemon with their personal key (a personal machine) beside it, user
 * settings naming the scripted model, and a workspace on the repository with that machine as its
 * default.
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { daemonDirs, serverUrl, startDaemon } from "./Daemons.ts"
import { eventually } from "./Polling.ts"
import { type RuntimeProject, runtimeProject } from "./RuntimeProject.ts"
import type { ScriptedProviderShape } from "./ScriptedProvider.ts"

export const gitIn = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.test", ...args], { cwd, encoding: "utf8" }).trim()

/** A git repository with one commit on `main`. */
export const makeRepository = (dir: string) => {
  mkdirSync(dir, { recursive: true })
  gitIn(dir, "init", "-q", "-b", "main")
  writeFileSync(join(dir, "README.md"), "# Demo\n")
  gitIn(dir, "add", ".")
  gitIn(dir, "commit", "-q", "-m", "first")
  return dir
}

/** A runtime project whose owner runs a daemon with their personal key (a personal machine) beside a repository. */
export const workspaceSetup = (provider: ScriptedProviderShape) =>
  Effect.gen(function*() {
    const rt = yield* runtimeProject(provider)
    const dirs = daemonDirs()
    const repo = makeRepository(join(dirs.work, "repo"))
    const daemon = startDaemon({ server: yield* serverUrl, token: rt.owner.token, name: "laptop", dirs: [dirs.work], state: dirs.state })
    const [machine] = yield* eventually(
      rt.client.machines.list({ params: { orgID: rt.org.id }, query: { status: "online" } }).pipe(Effect.map((page) => page.data)),
      (machines) => machines.length === 1,
      "the daemon online",
      "30 seconds"
    )
    yield* rt.client.userSettings.update({
      payload: { code: { mode: "accept_edits", default_provider: "Scripted", providers: { Scripted: { model: "Scripted model" } } } }
    })
    const workspace = yield* rt.client.workspaces.create({
      payload: {
        name: "Demo",
        org_id: rt.org.id,
        project_id: rt.project.id,
        repository: { url: repo, base_ref: "main" },
        default_machine_id: machine.id
      }
    })
    return { rt, dirs, repo, daemon, machine, workspace }
  })

/** Machine B: a second daemon of the same user ("desktop") in directories of its own, once it is online beside `first`. */
export const secondMachine = (rt: RuntimeProject, first: { readonly id: string }) =>
  Effect.gen(function*() {
    const dirs = daemonDirs()
    startDaemon({ server: yield* serverUrl, token: rt.owner.token, name: "desktop", dirs: [dirs.work], state: dirs.state })
    const online = yield* eventually(
      rt.client.machines.list({ params: { orgID: rt.org.id }, query: { status: "online" } }).pipe(Effect.map((page) => page.data)),
      (machines) => machines.length === 2,
      "machine B online",
      "30 seconds"
    )
    return { machine: online.find((m) => m.id !== first.id)!, dirs }
  })
