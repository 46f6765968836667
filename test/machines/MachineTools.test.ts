/**
 * An agent acting on a real machine: a daemon child process registered with a daemon token, the
 * machine granted to the project and named in the agent config, and a scripted model that lists,
 * reads, writes (digest required, then with it), edits, runs a command (with the source's env and
 * a secret env) and tries to escape the machine's directory; it answers from the results. Also:
 * the daemon's token out of its commands' reach, the files route, a config naming a machine the
 * project may not use, deletion refused while a call runs, and a machine call's record and its
 * result, each one statement, meeting another process's append.
 */
import { HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { createHash } from "node:crypto"
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll } from "vitest"
import { WATCHER_NAME } from "../../src/daemon/tools/CommandGroups.ts"
import type { AgentId } from "../../src/domain/shared/Ids.ts"
import { connectedMachine, killDaemons, serverUrl, startDaemon } from "../support/Daemons.ts"
import { appendHoldingAgent } from "../support/HeldAgent.ts"
import { eventually } from "../support/Polling.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { commandConfig, type RuntimeProject, runtimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { expectFailure, rawRequest } from "../support/TestApp.ts"
import { describeRuntime } from "../runtime/RuntimeLayer.ts"

afterAll(killDaemons)

/** The bounded wait for an offline machine, short here (docs/machines.md). */
const OFFLINE_WAIT_SECONDS = 3

const digest = (text: string) => "sha256:" + createHash("sha256").update(text).digest("hex")

/** A connected daemon's machine granted to the project, with a file in its directory and one outside it. */
const connectedMachineWithFiles = (rt: RuntimeProject) =>
  Effect.tap(connectedMachine(rt), ({ dirs, work }) =>
    Effect.sync(() => {
      writeFileSync(join(work, "notes.txt"), "hello machine\n")
      writeFileSync(join(dirs.root, "outside.txt"), "secret outside\n")
    }))

/**
 * A turn of a new agent whose machine tools run on a connected daemon's machine, scripted to run
 * `command` (its model call answering after `delay_ms`, if given), then to answer.
 */
const commandTurn = (command: string, options: { readonly delay_ms?: number } = {}) =>
  Effect.gen(function*() {
    const provider = yield* ScriptedProvider
    const rt = yield* runtimeProject(provider)
    const { machine, work } = yield* connectedMachineWithFiles(rt)
    const config = yield* commandConfig(rt, { machine: machine.id, cwd: work })
    yield* provider.script([
      Reply.answer([{ type: "tool_call", name: "run_command", input: { command } }], options),
      Reply.text("Done.")
    ], { model: rt.slug })
    const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
    const sent = yield* rt.send(agent.id, "Run it")
    return { provider, rt, agent, work, turnId: sent.event.turn_id! }
  })

/** The output of the agent's (first) run_command call, as its tool_result carries it. */
const commandOutput = (rt: RuntimeProject, agentId: AgentId) =>
  Effect.map(rt.events(agentId), (events) => {
    const result = events.find((event) => event.event_kind === "tool_result") as unknown as { content_blocks: ReadonlyArray<{ text: string }> }
    return JSON.parse(result.content_blocks[0].text)
  })

const processRunning = (pattern: string) => {
  const result = spawnSync("pgrep", ["-f", pattern])
  return result.status === 0
}

describeRuntime("120 seconds", { machineOfflineWaitSeconds: OFFLINE_WAIT_SECONDS })("machine tools", (it) => {
  it.effect("an agent lists, reads, writes, edits and runs a command on its machine and answers from the results", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const setup = yield* runtimeProject(provider)
      const { machine, work } = yield* connectedMachineWithFiles(setup)
      const secret = yield* setup.client.secrets.create({
        params: { orgID: setup.org.id },
        payload: { name: "Machine secret", value: Redacted.make("s3cret-value") }
      })
      yield* setup.client.secrets.createGrant({
        params: { orgID: setup.org.id, secretID: secret.id },
        payload: { target_project_id: setup.project.id }
      })
      const rt = yield* runtimeProject(provider, {
        extraSource: [
          "  write_file: { permission: allow }",
          "  edit_file: { permission: allow }",
          "  run_command: { permission: allow }",
          "machine_sources:",
          `  - machine_id: ${machine.id}`,
          `    cwd: ${work}`,
          "    env_overlay: { GREETING: hi-there }",
          "    secret_env_overlay: { SECRET_VALUE: Machine secret }"
        ]
      }).pipe(Effect.result)
      // A config of another organization's project cannot name the machine.
      expect(rt._tag).toBe("Failure")
      const config = yield* setup.client.agentConfigs.create({
        params: setup.projectPath,
        payload: {
          source_format: "yaml",
          source: [
            "instruction: Work on the machine.",
            "model: { provider_config: Scripted, name: Scripted model }",
            "tools:",
            "  write_file: { permission: allow }",
            "  edit_file: { permission: allow }",
            "  run_command: { permission: allow }",
            "machine_sources:",
            `  - machine_id: ${machine.id}`,
            `    cwd: ${work}`,
            "    env_overlay: { GREETING: hi-there }",
            "    secret_env_overlay: { SECRET_VALUE: Machine secret }",
            ""
          ].join("\n")
        }
      })
      const original = "hello machine\n"
      yield* provider.script([
        Reply.toolCall("list_files", { path: "." }),
        Reply.toolCall("read_file", { path: "notes.txt" }),
        Reply.toolCall("write_file", { path: "notes.txt", content: "changed\n" }),
        Reply.toolCall("write_file", { path: "notes.txt", content: "changed\n", expected_digest: digest(original) }),
        Reply.toolCall("edit_file", { path: "notes.txt", old_text: "changed", new_text: "edited", expected_digest: digest("changed\n") }),
        Reply.toolCall("run_command", {
          command: "cat notes.txt; echo \"$GREETING\"; echo \"echoed: $SECRET_VALUE\"; " +
            "test \"$SECRET_VALUE\" = \"$(printf 's3cret-%s' value)\" && echo secret-ok"
        }),
        Reply.toolCall("read_file", { path: "../outside.txt" }),
        Reply.text("The file now says edited.")
      ], { model: setup.slug })
      const agent = yield* setup.client.agents.create({ params: setup.projectPath, payload: { agent_config_id: config.id } })
      yield* setup.send(agent.id, "Work on notes.txt")
      yield* setup.idle(agent.id, "60 seconds")

      const calls = yield* setup.toolCalls(agent.id)
      expect(calls.map((call) => [call.name, call.state, call.outcome])).toEqual([
        ["list_files", "completed", "succeeded"],
        ["read_file", "completed", "succeeded"],
        ["write_file", "completed", "failed"],
        ["write_file", "completed", "succeeded"],
        ["edit_file", "completed", "succeeded"],
        ["run_command", "completed", "succeeded"],
        ["read_file", "completed", "failed"]
      ])
      expect(readFileSync(join(work, "notes.txt"), "utf8")).toBe("edited\n")

      const events = yield* setup.events(agent.id)
      const results = events.flatMap((event) =>
        event.event_kind === "tool_result" ? [JSON.stringify(event.content_blocks)] : []
      )
      expect(results[0]).toContain("notes.txt")
      expect(results[1]).toContain("hello machine")
      expect(results[2]).toContain("expected_digest_required")
      expect(results[5]).toContain("edited")
      expect(results[5]).toContain("hi-there")
      expect(results[5]).toContain("secret-ok")
      expect(results[6]).toContain("forbidden")
      expect(results[6]).not.toContain("secret outside")
      // The secret's value reached the command, never the timeline: the command's echo of it is redacted.
      expect(results[5]).toContain(`echoed: [redacted secret ${secret.id}]`)
      expect(JSON.stringify(events)).not.toContain("s3cret-value")
      // The model read the results: its last request carries the command's output.
      const requests = (yield* provider.requests).filter((request) => request.body?.model === setup.slug)
      expect(JSON.stringify(requests[requests.length - 1].body)).toContain("secret-ok")
      const turn = events.find((event) => event.event_kind === "turn" && (event as { turn_status?: string }).turn_status === "completed")
      expect(turn).toBeDefined()
    }), { timeout: 120_000 })

  it.effect("the files route reads and writes through the daemon with the digest rules", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { machine, work } = yield* connectedMachineWithFiles(rt)
      // A source may name the machine; the compiled config holds its id.
      const named = yield* commandConfig(rt, { machine: "worker", cwd: work })
      expect(named.compiled_definition.machine_sources?.[0]?.machine_id).toBe(machine.id)
      const unknown = yield* expectFailure(commandConfig(rt, { machine: "no-such-machine", cwd: work }))
      expect(JSON.stringify(unknown)).toContain("/machine_sources/0/machine_id")
      const path = { orgID: rt.org.id, machineID: machine.id }
      const file = join(work, "notes.txt")
      const read = yield* rt.client.machines.readFile({ params: path, query: { path: file } })
      expect(read).toMatchObject({ path: file, content: "hello machine\n", encoding: "utf-8", read_only: false, digest: digest("hello machine\n") })
      const required = yield* expectFailure(rt.client.machines.writeFile({ params: path, query: { path: file }, payload: { content: "x" } }))
      expect(required).toMatchObject({ _tag: "ExpectedDigestRequired", current_digest: read.digest })
      const conflict = yield* expectFailure(rt.client.machines.writeFile({
        params: path,
        query: { path: file },
        payload: { content: "x", expected_digest: digest("something else") }
      }))
      expect(conflict).toMatchObject({ _tag: "FileContentConflict", current_digest: read.digest })
      const written = yield* rt.client.machines.writeFile({
        params: path,
        query: { path: file },
        payload: { content: "x", expected_digest: read.digest }
      })
      expect(written).toMatchObject({ digest: digest("x"), size: 1, created: false })
      expect(readFileSync(file, "utf8")).toBe("x")
      // A body over the default 1 MiB JSON limit: the files route takes whole files of up to 10 MiB.
      const big = "y".repeat(3 * 1024 * 1024)
      const created = yield* rt.client.machines.writeFile({ params: path, query: { path: join(work, "big.txt") }, payload: { content: big } })
      expect(created).toMatchObject({ size: big.length, created: true, digest: digest(big) })
      const directory = yield* expectFailure(rt.client.machines.readFile({ params: path, query: { path: work } }))
      expect(directory._tag).toBe("NotAFile")
      const escape = yield* expectFailure(rt.client.machines.readFile({ params: path, query: { path: join(work, "..", "outside.txt") } }))
      expect(escape._tag).toBe("Forbidden")
      const missing = yield* expectFailure(rt.client.machines.readFile({ params: path, query: { path: join(work, "nope.txt") } }))
      expect(missing._tag).toBe("NotFound")
    }), { timeout: 90_000 })

  it.effect("the files route refuses a path holding a NUL (%00) as invalid_request at /path, and content that is not base64 at /content, before anything is stored", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { machine, work } = yield* connectedMachineWithFiles(rt)
      const files = (path: string) => `/v1/orgs/${rt.org.id}/machines/${machine.id}/files?path=${path}`
      const bad = `${encodeURIComponent(work)}%2Fa%00b.txt`
      const answers = [
        yield* rawRequest(HttpClientRequest.get(files(bad)).pipe(HttpClientRequest.bearerToken(rt.owner.token))),
        yield* rawRequest(
          HttpClientRequest.put(files(bad)).pipe(
            HttpClientRequest.bearerToken(rt.owner.token),
            HttpClientRequest.bodyJsonUnsafe({ content: "x" })
          )
        )
      ]
      for (const answer of answers) {
        expect(answer.status).toBe(400)
        expect(answer.json).toMatchObject({
          code: "invalid_request",
          issues: [{ path: "/path", message: "must not contain a NUL character (U+0000)" }]
        })
      }
      expect(existsSync(join(work, "a"))).toBe(false)
      // The same path without the NUL is an ordinary one.
      const created = yield* rt.client.machines.writeFile({
        params: { orgID: rt.org.id, machineID: machine.id },
        query: { path: join(work, "ab.txt") },
        payload: { content: "x" }
      })
      expect(created.created).toBe(true)
      // Content that is not base64 is refused at /content, the file untouched.
      const notBase64 = yield* rawRequest(
        HttpClientRequest.put(files(`${encodeURIComponent(work)}%2Fab.txt`)).pipe(
          HttpClientRequest.bearerToken(rt.owner.token),
          HttpClientRequest.bodyJsonUnsafe({ content: "!!", encoding: "base64" })
        )
      )
      expect(notBase64.status).toBe(400)
      expect(notBase64.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/content", message: expect.stringContaining("base64") }] })
      expect(readFileSync(join(work, "ab.txt"), "utf8")).toBe("x")
    }), { timeout: 90_000 })

  it.effect("the files route answers every path outside the machine's directories alike, 403 forbidden, whether it exists or not, before the machine's file system is asked", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { machine, work, dirs } = yield* connectedMachineWithFiles(rt)
      const files = (path: string) => `/v1/orgs/${rt.org.id}/machines/${machine.id}/files?path=${encodeURIComponent(path)}`
      const answer = (method: "get" | "put", path: string) =>
        rawRequest(
          (method === "get" ? HttpClientRequest.get(files(path)) : HttpClientRequest.put(files(path))).pipe(
            HttpClientRequest.bearerToken(rt.owner.token),
            method === "put" ? HttpClientRequest.bodyJsonUnsafe({ content: "x" }) : (request) => request
          )
        )
      // Links inside the directory to an outside file that exists and to one that does not.
      symlinkSync(join(dirs.root, "outside.txt"), join(work, "to-existing"))
      symlinkSync(join(dirs.root, "no-such-file.txt"), join(work, "to-missing"))
      symlinkSync("/etc", join(work, "to-etc"))
      const reads = [
        "/etc/passwd", "/etc/no-such-file", "/root/.ssh/id_rsa", join(dirs.root, "outside.txt"), join(dirs.root, "no-such-file.txt"),
        join(work, "to-existing"), join(work, "to-missing"), join(work, "to-etc", "passwd"), join(work, "to-etc", "no-such-file")
      ]
      const writes = [
        "/etc/passwd/x", "/etc/no-such-dir/x", join(dirs.root, "outside.txt", "x"), join(dirs.root, "no-such-dir", "x"),
        join(work, "to-missing"), join(work, "to-etc", "passwd", "x"), join(work, "to-etc", "no-such-dir", "x")
      ]
      const answers = [
        ...(yield* Effect.forEach(reads, (path) => Effect.map(answer("get", path), (response) => ({ path, response })))),
        ...(yield* Effect.forEach(writes, (path) => Effect.map(answer("put", path), (response) => ({ path, response }))))
      ]
      for (const { path, response } of answers) {
        expect({ path, status: response.status, json: response.json }).toEqual({
          path,
          status: 403,
          json: { code: "forbidden", error: `${path} lies outside the machine's directories (${work})` }
        })
      }
      expect(existsSync(join(dirs.root, "no-such-file.txt"))).toBe(false)
      expect(existsSync(join(dirs.root, "no-such-dir"))).toBe(false)
      // Inside, the same kinds of path keep their own answers.
      const missing = yield* answer("get", join(work, "no-such-file.txt"))
      expect([missing.status, missing.json]).toEqual([404, { code: "not_found", error: `${join(work, "no-such-file.txt")} does not exist` }])
      const underFile = yield* answer("put", join(work, "notes.txt", "x"))
      expect([underFile.status, underFile.json]).toEqual([
        400,
        { code: "invalid_request", error: `a parent of ${join(work, "notes.txt", "x")} is a file, not a directory`, issues: [expect.objectContaining({ path: "/path" })] }
      ])
    }), { timeout: 90_000 })

  it.effect("the files route: a name too long for the file system is 400 invalid_request at /path, a loop of symlinks 422; a 255-byte name is written", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { machine, work } = yield* connectedMachineWithFiles(rt)
      const params = { orgID: rt.org.id, machineID: machine.id }
      const tooLong = join(work, "a".repeat(300))
      const refusals = [
        yield* expectFailure(rt.client.machines.readFile({ params, query: { path: tooLong } })),
        yield* expectFailure(rt.client.machines.writeFile({ params, query: { path: tooLong }, payload: { content: "x" } })),
        // A missing directory whose name is too long, on the way to the file.
        yield* expectFailure(rt.client.machines.writeFile({
          params,
          query: { path: join(tooLong, "x.txt") },
          payload: { content: "x" }
        }))
      ]
      for (const refusal of refusals) {
        expect(refusal).toMatchObject({
          _tag: "InvalidRequest",
          issues: [{ path: "/path", message: expect.stringContaining("is too long for the machine's file system") }]
        })
      }
      symlinkSync("loop-b", join(work, "loop-a"))
      symlinkSync("loop-a", join(work, "loop-b"))
      const loopRead = yield* expectFailure(rt.client.machines.readFile({ params, query: { path: join(work, "loop-a") } }))
      expect(loopRead).toMatchObject({ _tag: "Unprocessable", error: expect.stringContaining("loop of symbolic links") })
      const loopWrite = yield* expectFailure(rt.client.machines.writeFile({
        params,
        query: { path: join(work, "loop-a", "x.txt") },
        payload: { content: "x" }
      }))
      expect(loopWrite._tag).toBe("Unprocessable")

      // The longest name the file system takes: its temporary file's name must fit too.
      for (const name of ["b".repeat(255), "é".repeat(127)]) {
        const longest = join(work, name)
        const written = yield* rt.client.machines.writeFile({ params, query: { path: longest }, payload: { content: "long" } })
        expect(written).toMatchObject({ path: longest, created: true, digest: digest("long") })
        const read = yield* rt.client.machines.readFile({ params, query: { path: longest } })
        expect(read.content).toBe("long")
        const replaced = yield* rt.client.machines.writeFile({
          params,
          query: { path: longest },
          payload: { content: "longer", expected_digest: read.digest }
        })
        expect(replaced).toMatchObject({ created: false, digest: digest("longer") })
      }
      expect(readdirSync(work).filter((entry) => entry.endsWith(".tmp"))).toEqual([])
    }), { timeout: 90_000 })

  it.effect("deleting a machine is refused while a call runs on it; cancel_current kills the command; then the machine goes and its daemon registers anew", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { machine, work } = yield* connectedMachineWithFiles(rt)
      const config = yield* commandConfig(rt, { machine: machine.id, cwd: work })
      const marker = `sleep 41.${Math.floor(Math.random() * 1000)}`
      yield* provider.script([
        Reply.toolCall("run_command", { command: `${marker}; echo finished > marker.txt` }),
        Reply.text("unused")
      ], { model: rt.slug })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* rt.send(agent.id, "Run it")
      yield* eventually(Effect.sync(() => processRunning(marker)), (running) => running, "the command running on the machine", "30 seconds")
      const path = { orgID: rt.org.id, machineID: machine.id }
      const refused = yield* expectFailure(rt.client.machines.remove({ params: path }))
      expect(refused._tag).toBe("PendingWork")

      yield* rt.client.agents.control({ params: rt.agentPath(agent.id), payload: { control_type: "cancel_current" } })
      yield* rt.idle(agent.id)
      yield* eventually(Effect.sync(() => processRunning(marker)), (running) => !running, "the command killed")
      const [call] = yield* rt.toolCalls(agent.id)
      expect(call.state).toBe("cancelled")
      // The daemon's `cancelled` result closes the request; then the machine may go.
      yield* eventually(Effect.result(rt.client.machines.remove({ params: path })), (removed) => removed._tag === "Success", "the machine deleted")
      expect(existsSync(join(work, "marker.txt"))).toBe(false)
      const [replacement] = yield* eventually(
        rt.client.machines.list({ params: { orgID: rt.org.id }, query: { status: "online" } }).pipe(Effect.map((page) => page.data)),
        (machines) => machines.length === 1,
        "the daemon registered as a new machine",
        "30 seconds"
      )
      expect(replacement.id).not.toBe(machine.id)
      expect(replacement.name).toBe("worker")
    }), { timeout: 120_000 })

  it.effect("a call to a machine that is offline waits, then fails saying so; the turn goes on", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { daemon, machine, work } = yield* connectedMachineWithFiles(rt)
      const config = yield* commandConfig(rt, { machine: machine.id, cwd: work })
      yield* Effect.promise(() => daemon.stop())
      yield* eventually(
        rt.client.machines.get({ params: { orgID: rt.org.id, machineID: machine.id } }),
        (m) => m.status === "offline",
        "the machine offline"
      )
      yield* provider.script([Reply.toolCall("list_files", {}), Reply.text("The machine is offline.")], { model: rt.slug })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      const started = Date.now()
      yield* rt.send(agent.id, "List")
      yield* rt.idle(agent.id, "30 seconds")
      expect(Date.now() - started).toBeGreaterThanOrEqual(OFFLINE_WAIT_SECONDS * 1000)
      const [call] = yield* rt.toolCalls(agent.id)
      expect(call).toMatchObject({ state: "completed", outcome: "failed" })
      const events = yield* rt.events(agent.id)
      const result = events.find((event) => event.event_kind === "tool_result")
      expect(JSON.stringify(result)).toContain("is offline")
    }), { timeout: 90_000 })

  it.effect("a call to a machine that was deleted fails at once saying so, as one to a deleted pool's; the turn goes on", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { daemon, machine, work } = yield* connectedMachineWithFiles(rt)
      const config = yield* commandConfig(rt, { machine: machine.id, cwd: work })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* Effect.promise(() => daemon.stop())
      yield* rt.client.machines.remove({ params: { orgID: rt.org.id, machineID: machine.id } })
      yield* provider.script([Reply.toolCall("list_files", {}), Reply.text("The machine is gone.")], { model: rt.slug })
      yield* rt.send(agent.id, "List")
      yield* rt.idle(agent.id, "30 seconds")
      const [call] = yield* rt.toolCalls(agent.id)
      expect(call).toMatchObject({ state: "completed", outcome: "failed" })
      const events = yield* rt.events(agent.id)
      const result = events.find((event) => event.event_kind === "tool_result")
      expect(result?.content_blocks).toEqual([{ type: "text", text: `upstream_unavailable: Machine ${machine.id} was deleted` }])
    }), { timeout: 90_000 })

  it.effect("a daemon killed mid-call ends the command with it, though a command killed its watcher before; restarted, it answers the call with interrupted; the turn goes on", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { daemon, dirs, machine, token, work } = yield* connectedMachineWithFiles(rt)
      const config = yield* commandConfig(rt, { machine: machine.id, cwd: work })
      const marker = `sleep 42.${Math.floor(Math.random() * 1000)}`
      yield* provider.script([
        // The command's shell is the daemon's child, as the watcher is: this kills this daemon's watcher only.
        Reply.toolCall("run_command", { command: `pkill -KILL -P $PPID -f ${WATCHER_NAME}` }),
        Reply.toolCall("run_command", { command: marker }),
        Reply.text("It was interrupted.")
      ], { model: rt.slug })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* rt.send(agent.id, "Run it")
      yield* eventually(Effect.sync(() => processRunning(marker)), (running) => running, "the command running", "30 seconds")
      yield* Effect.promise(() => daemon.kill())
      // The command does not outlive the daemon that ran it, killed as it was (SIGKILL).
      yield* eventually(Effect.sync(() => processRunning(marker)), (running) => !running, "the command ended with its daemon", "10 seconds")
      startDaemon({ server: yield* serverUrl, token, name: "worker", dirs: [work], state: dirs.state })
      yield* rt.idle(agent.id, "30 seconds")
      const [killing, interrupted] = yield* rt.toolCalls(agent.id)
      expect(killing).toMatchObject({ state: "completed", outcome: "succeeded" })
      expect(interrupted).toMatchObject({ state: "completed", outcome: "failed" })
      const events = yield* rt.events(agent.id)
      expect(JSON.stringify(events.filter((event) => event.event_kind === "tool_result").at(-1))).toContain("interrupted")
      const machines = yield* rt.client.machines.list({ params: { orgID: rt.org.id }, query: {} })
      expect(machines.data.map((m) => m.id)).toEqual([machine.id])
    }), { timeout: 90_000 })

  it.effect("a command past its timeout is killed and its result says so", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { machine, work } = yield* connectedMachineWithFiles(rt)
      const config = yield* commandConfig(rt, { machine: machine.id, cwd: work })
      const marker = `sleep 43.${Math.floor(Math.random() * 1000)}`
      yield* provider.script([
        Reply.toolCall("run_command", { command: `${marker}; echo never`, timeout_seconds: 1 }),
        Reply.text("It timed out.")
      ], { model: rt.slug })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* rt.send(agent.id, "Run it")
      yield* rt.idle(agent.id, "30 seconds")
      const output = yield* commandOutput(rt, agent.id)
      expect(output).toMatchObject({ timed_out: true, exit_code: null })
      expect(output.stdout).not.toContain("never")
      expect(processRunning(marker)).toBe(false)
    }), { timeout: 90_000 })

  it.effect("a command finds the daemon's token neither in its own environment nor in the daemon's, nor on the daemon's stdin", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { daemon, machine, token, work } = yield* connectedMachineWithFiles(rt)
      const config = yield* commandConfig(rt, { machine: machine.id, cwd: work })
      // The shell's pid and its parent's, each with the number of lines of its initial environment that hold the
      // token; then the bytes on the parent's stdin.
      const command = `for p in $$ $PPID; do echo "$p $(tr '\\0' '\\n' < /proc/$p/environ | grep -cF -e '${token}')"; done; wc -c < /proc/$PPID/fd/0`
      yield* provider.script([Reply.toolCall("run_command", { command }), Reply.text("Done.")], { model: rt.slug })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* rt.send(agent.id, "Run it")
      yield* rt.idle(agent.id, "30 seconds")
      const output = yield* commandOutput(rt, agent.id)
      // The parent is the daemon, started with the token in its environment (the same pid).
      expect((output.stdout as string).trim().split("\n")).toEqual([expect.stringMatching(/^\d+ 0$/), `${daemon.pid} 0`, "0"])
    }), { timeout: 90_000 })

  it.effect("a machine tool that asks first runs on the machine once approved", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const rt = yield* runtimeProject(provider)
      const { machine, work } = yield* connectedMachineWithFiles(rt)
      // write_file asks by default.
      const config = yield* rt.client.agentConfigs.create({
        params: rt.projectPath,
        payload: {
          source_format: "yaml",
          source: [
            "instruction: Work on the machine.",
            "model: { provider_config: Scripted, name: Scripted model }",
            "machine_sources:",
            `  - machine_id: ${machine.id}`,
            `    cwd: ${work}`,
            ""
          ].join("\n")
        }
      })
      yield* provider.script([
        Reply.toolCall("write_file", { path: "approved.txt", content: "yes\n" }),
        Reply.text("Written.")
      ], { model: rt.slug })
      const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
      yield* rt.send(agent.id, "Write it")
      yield* rt.waiting(agent.id)
      expect(existsSync(join(work, "approved.txt"))).toBe(false)
      const [approval] = yield* rt.interactions(agent.id)
      yield* rt.client.interactions.resolve({
        params: { ...rt.projectPath, interactionID: approval.id },
        payload: { decision: "approve" }
      })
      yield* rt.idle(agent.id, "30 seconds")
      expect(readFileSync(join(work, "approved.txt"), "utf8")).toBe("yes\n")
      const [call] = yield* rt.toolCalls(agent.id)
      expect(call).toMatchObject({ name: "write_file", state: "completed", outcome: "succeeded" })
    }), { timeout: 90_000 })

  // A model call whose tool calls all run on the machine is recorded in one statement with their
  // requests (TurnLifecycle.recordCallsAlone), and a daemon's result completes its call in one
  // statement (MachineResults); each numbers its events from its snapshot, so an append of another
  // process holding the agent sends it the transaction's way. Postgres only: the embedded database
  // has one connection, on which another process's transaction cannot wait.
  it.effect.skipIf(usesEmbeddedDatabase)(
    "an append that holds the agent while a machine call is recorded: the call's event comes after it, the call runs on the machine once",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { agent, provider, rt, turnId, work } = yield* commandTurn("echo ran >> runs.txt", { delay_ms: 500 })
        yield* eventually(provider.requests, (all) => all.some((r) => r.body?.model === rt.slug), "the model call")
        yield* appendHoldingAgent(sql, agent.id, turnId, "the record of the machine call waiting for the agent")
        yield* rt.idle(agent.id, "30 seconds")
        const turn = (yield* rt.events(agent.id)).filter((event) => event.turn_id === turnId)
        expect(turn.map((event) => [event.event_kind, event.turn_sequence])).toEqual([
          ["agent_input", 0],
          ["turn", 1],
          ["model_output", 2],
          ["tool_call", 3],
          ["tool_result", 4],
          ["model_output", 5],
          ["turn", 6]
        ])
        expect(turn.map((event) => event.sequence - turn[0].sequence)).toEqual([0, 1, 2, 3, 4, 5, 6])
        const [call] = yield* rt.toolCalls(agent.id)
        expect(call).toMatchObject({ name: "run_command", state: "completed", outcome: "succeeded" })
        expect(readFileSync(join(work, "runs.txt"), "utf8")).toBe("ran\n")
      }),
    { timeout: 60_000 }
  )

  it.effect.skipIf(usesEmbeddedDatabase)(
    "an append that holds the agent while a machine result is recorded: the result's event comes after it, the turn goes on",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Long enough for the append below to hold the agent before the result comes, on a loaded
        // machine too (with one second, CI once stored the result first, and nothing waited).
        const marker = `sleep 4.${Math.floor(Math.random() * 1000)}`
        const { agent, rt, turnId } = yield* commandTurn(`${marker}; echo done`)
        yield* eventually(Effect.sync(() => processRunning(marker)), (running) => running, "the command running on the machine", "30 seconds")
        // Another process's append to the turn, holding the agent's row until the result waits for it.
        yield* appendHoldingAgent(sql, agent.id, turnId, "the machine result waiting for the agent")
        yield* rt.idle(agent.id, "30 seconds")
        const turn = (yield* rt.events(agent.id)).filter((event) => event.turn_id === turnId)
        expect(turn.map((event) => [event.event_kind, event.turn_sequence])).toEqual([
          ["agent_input", 0],
          ["turn", 1],
          ["tool_call", 2],
          ["model_output", 3],
          ["tool_result", 4],
          ["model_output", 5],
          ["turn", 6]
        ])
        const [call] = yield* rt.toolCalls(agent.id)
        expect(call).toMatchObject({ name: "run_command", state: "completed", outcome: "succeeded" })
        expect(turn[4]).toMatchObject({ tool_call_id: call.id, outcome: "succeeded" })
      }),
    { timeout: 60_000 }
  )
})
