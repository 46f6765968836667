/**
 * Sessions of a workspace with a real daemon and real git (docs/workspaces.md): a repository made
 * in a temp dir, a personal machine (daemon registered with the personal API key), a session with
 * an initial prompt and a worktree name: the branch and worktree exist on the machine, and the
 * scripted model lists the files and writes one there through the session's agent. Sessions
 * started at once on one new worktree name (one worktree, each its own agent), and at once where
 * git fails (each its real error); a placement hold left by a stopped server. Also the error
 * answers: offline machine, no model, no repository, another user's workspace.
 */
import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll } from "vitest"
import { describeRuntime } from "../runtime/RuntimeLayer.ts"
import { killDaemons } from "../support/Daemons.ts"
import { eventually } from "../support/Polling.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { expectFailure, ID_PATTERN, newId, newUser, rawRequest } from "../support/TestApp.ts"
import { type AgentId, WorkspaceSessionId } from "../../src/domain/shared/Ids.ts"

afterAll(killDaemons)

import { gitIn, workspaceSetup } from "../support/Workspaces.ts"

describeRuntime("180 seconds")("workspace sessions", (it) => {
  it.effect("a session with a worktree name and an initial prompt: the branch on the machine, the agent works there", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { daemon, machine, repo, rt, workspace } = yield* workspaceSetup(provider)
      yield* provider.script([
        Reply.toolCall("list_files", { path: "." }),
        Reply.toolCall("write_file", { path: "NOTES.md", content: "written by the agent\n" }),
        Reply.text("I listed the files and wrote NOTES.md.")
      ], { model: rt.slug })
      const launched = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { initial_prompt: "List the files and write NOTES.md", worktree_name: "feature/notes" }
      }).pipe(Effect.tapError(() => Effect.sync(() => console.log(daemon.output()))))
      expect(launched.status).toBe("ok")
      const { payload } = launched
      expect(payload.session_id).toMatch(ID_PATTERN("wss"))
      expect(payload.agent_id).toMatch(ID_PATTERN("agt"))
      expect(payload.worktree_id).toMatch(ID_PATTERN("wtr"))
      expect(payload.machine_id).toBe(machine.id)
      expect(payload.events_path).toBe(`/api/v1/orgs/${rt.org.id}/projects/${rt.project.id}/agents/${payload.agent_id}/events`)

      // The branch exists in the repository and the worktree is checked out on it.
      expect(gitIn(repo, "branch", "--list", "feature/notes")).toContain("feature/notes")
      const worktrees = yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } })
      const named = worktrees.find((w) => w.id === payload.worktree_id)!
      expect(named).toMatchObject({ is_main: false, name: "feature/notes", worktree_type: "LOCAL", checkpoint_restore_pending: false })
      expect(named.path).toMatch(/\.agent-platform\/worktrees\/wsp_[a-z2-7]{26}\/feature\/notes$/)
      expect(named.user_machine_path).toMatchObject({ machine_id: machine.id, local_path: named.path })
      expect(gitIn(named.path!, "rev-parse", "--abbrev-ref", "HEAD")).toBe("feature/notes")

      // The agent of the session is an agent of the project: its timeline, tool calls on the machine.
      yield* rt.idle(payload.agent_id, "60 seconds")
      const calls = yield* rt.toolCalls(payload.agent_id)
      expect(calls.map((call) => [call.name, call.state, call.outcome])).toEqual([
        ["list_files", "completed", "succeeded"],
        ["write_file", "completed", "succeeded"]
      ])
      expect(readFileSync(join(named.path!, "NOTES.md"), "utf8")).toBe("written by the agent\n")
      expect(existsSync(join(repo, "NOTES.md"))).toBe(false)
      const events = yield* rt.events(payload.agent_id)
      expect(JSON.stringify(events[0])).toContain("List the files and write NOTES.md")
      const raw = yield* rawRequest(HttpClientRequest.get(payload.events_path).pipe(HttpClientRequest.bearerToken(rt.owner.token)))
      expect(raw.status).toBe(200)

      // The same worktree name again reuses the worktree; user_session_id reuses the session.
      const again = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "feature/notes" }
      })
      expect(again.payload.worktree_id).toBe(payload.worktree_id)
      expect(again.payload.session_id).not.toBe(payload.session_id)
      const reused = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { user_session_id: payload.session_id }
      })
      expect(reused).toEqual(launched)
      const connected = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { agent_session_id: payload.agent_id }
      })
      expect(connected.payload.agent_id).toBe(payload.agent_id)

      // Without a worktree name the session works in the main worktree: the repository itself.
      const main = yield* rt.client.workspaces.launchSession({ params: { workspace_id: workspace.id }, payload: {} })
      const list = yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } })
      const mainTree = list.find((w) => w.is_main)!
      expect(main.payload.worktree_id).toBe(mainTree.id)
      expect(mainTree.path).toBe(repo)
    }), { timeout: 150_000 })

  it.effect("sessions started in parallel on one new worktree name: all 201, one worktree, each its own session and agent", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { daemon, repo, rt, workspace } = yield* workspaceSetup(provider)
      yield* provider.script(Array.from({ length: 8 }, () => Reply.text("Hello from a parallel session.")), { model: rt.slug })
      const start = (name: string) =>
        rawRequest(
          HttpClientRequest.post(`/api/v1/workspaces/${workspace.id}/sessions`).pipe(
            HttpClientRequest.bearerToken(rt.owner.token),
            HttpClientRequest.bodyJsonUnsafe({ worktree_name: name, initial_prompt: "hi" })
          )
        )
      // All at once (git would race on the machine), and 40 ms apart (the first's worktree made
      // while the others were on their way: its row then refused theirs).
      const together = yield* Effect.all(Array.from({ length: 4 }, () => start("parallel")), { concurrency: "unbounded" })
      const staggered = yield* Effect.all(
        Array.from({ length: 4 }, (_, i) => Effect.delay(start("staggered"), `${i * 40} millis`)),
        { concurrency: "unbounded" }
      )
      const statuses = (answers: typeof together) => answers.map((answer) => [answer.status, answer.json?.status, answer.json?.payload])
      if ([...together, ...staggered].some((answer) => answer.status !== 201)) console.log(daemon.output())
      expect({ together: statuses(together), staggered: statuses(staggered) }).toEqual({
        together: together.map(() => [201, "ok", expect.anything()]),
        staggered: staggered.map(() => [201, "ok", expect.anything()])
      })
      const worktrees = yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } })
      for (const [name, answers] of [["parallel", together], ["staggered", staggered]] as const) {
        const payloads = answers.map((answer) => answer.json!.payload as Record<string, string>)
        const named = worktrees.filter((w) => w.name === name)
        expect(named).toHaveLength(1)
        expect(named[0]).toMatchObject({ worktree_type: "LOCAL", checkpoint_restore_pending: false })
        expect(new Set(payloads.map((payload) => payload.worktree_id))).toEqual(new Set([named[0]!.id]))
        expect(new Set(payloads.map((payload) => payload.session_id)).size).toBe(4)
        expect(new Set(payloads.map((payload) => payload.agent_id)).size).toBe(4)
        // One git worktree of that name on the machine, on its branch.
        const listed = gitIn(repo, "worktree", "list", "--porcelain").split("\n").filter((line) => line.startsWith("worktree "))
        expect(listed.filter((line) => line.endsWith(`/${name}`))).toEqual([`worktree ${named[0]!.path}`])
        expect(gitIn(named[0]!.path!, "rev-parse", "--abbrev-ref", "HEAD")).toBe(name)
        // Each session's agent took its prompt and ran its turn.
        for (const payload of payloads) {
          yield* rt.idle(payload.agent_id as AgentId, "60 seconds")
          const events = JSON.stringify(yield* rt.events(payload.agent_id as AgentId))
          expect(events).toContain("hi")
          expect(events).toContain("Hello from a parallel session.")
        }
      }
    }), { timeout: 150_000 })

  it.effect("sessions at once whose worktree cannot be made: each gets git's own error; a hold left by a stopped server only delays", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { rt, workspace } = yield* workspaceSetup(provider)
      const sql = yield* SqlClient.SqlClient
      yield* provider.script([Reply.text("Hello after the hold.")], { model: rt.slug })
      const start = (name: string) =>
        rawRequest(
          HttpClientRequest.post(`/api/v1/workspaces/${workspace.id}/sessions`).pipe(
            HttpClientRequest.bearerToken(rt.owner.token),
            HttpClientRequest.bodyJsonUnsafe({ worktree_name: name, initial_prompt: "hi" })
          )
        )
      const held = () =>
        Effect.map(
          sql<{ placement_id: string | null }>`SELECT placement_id FROM workspaces WHERE id = ${workspace.id}`,
          ([row]) => row!.placement_id
        )

      // The first start's git fails: the ones waiting behind it are not held up, each tries and gets the real error.
      yield* rt.client.workspaces.update({ params: { workspace_id: workspace.id }, payload: { repository: { base_ref: "nope" } } })
      const failed = yield* Effect.all(Array.from({ length: 3 }, () => start("broken")), { concurrency: "unbounded" })
      expect(failed.map((answer) => [answer.status, answer.json])).toEqual(failed.map(() => [422, {
        status: "error",
        payload: { code: "unprocessable", error: expect.stringContaining("the base ref nope does not exist") }
      }]))
      const worktrees = yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } })
      expect(worktrees.filter((w) => w.name === "broken")).toEqual([])
      expect(yield* held()).toBeNull()
      yield* rt.client.workspaces.update({ params: { workspace_id: workspace.id }, payload: { repository: { base_ref: "main" } } })

      // A hold left by a server that stopped mid-placing (or another server placing) delays the start until it lapses.
      yield* sql`UPDATE workspaces SET placement_id = 'stopped-server', placement_held_until = now() + interval '2 seconds'
                 WHERE id = ${workspace.id}`
      const began = Date.now()
      const after = yield* start("after-hold")
      expect(after.status).toBe(201)
      expect(Date.now() - began).toBeGreaterThanOrEqual(1_500)
      expect(yield* held()).toBeNull()
      yield* rt.idle((after.json!.payload as { agent_id: AgentId }).agent_id, "60 seconds")
    }), { timeout: 150_000 })

  it.effect("a start cut short after placing its worktree leaves no agent: agent, session and prompt are made together", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { rt, workspace } = yield* workspaceSetup(provider)
      const sql = yield* SqlClient.SqlClient
      yield* provider.script([Reply.text("Hello, all at once.")], { model: rt.slug })
      const start = (payload: Record<string, unknown>) =>
        rawRequest(
          HttpClientRequest.post(`/api/v1/workspaces/${workspace.id}/sessions`).pipe(
            HttpClientRequest.bearerToken(rt.owner.token),
            HttpClientRequest.bodyJsonUnsafe({ worktree_name: "together", ...payload })
          )
        )
      const counts = () =>
        Effect.map(
          sql<{ readonly agents: number; readonly sessions: number }>`
            SELECT (SELECT count(*)::int FROM agents WHERE project_id = ${rt.project.id}) AS agents,
                   (SELECT count(*)::int FROM workspace_sessions WHERE workspace_id = ${workspace.id}) AS sessions`,
          ([row]) => row
        )
      const before = yield* counts()
      // Each insert fails in turn, as a crash (or the database) would cut the start short there.
      yield* sql`
        CREATE FUNCTION refuse_row_7313() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'not today';
        END $$`
      const cuts = [["agent_inputs", { initial_prompt: "hi" }], ["workspace_sessions", { initial_prompt: "hi" }], ["workspace_sessions", {}]] as const
      for (const [table, payload] of cuts) {
        yield* sql.unsafe(`CREATE TRIGGER refuse_row_7313 BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION refuse_row_7313()`)
        const cut = yield* start(payload)
        expect(cut.status).toBe(500)
        expect(yield* counts()).toEqual(before)
        yield* sql.unsafe(`DROP TRIGGER refuse_row_7313 ON ${table}`)
      }
      yield* sql`DROP FUNCTION refuse_row_7313()`

      // The worktree placed by the starts that failed is reused; one agent, one session, prompted.
      const placed = (yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } }))
        .filter((w) => w.name === "together")
      expect(placed).toHaveLength(1)
      const started = yield* start({ initial_prompt: "hi" })
      expect(started.status).toBe(201)
      const payload = started.json!.payload as { agent_id: AgentId; worktree_id: string }
      expect(payload.worktree_id).toBe(placed[0].id)
      expect(yield* counts()).toEqual({ agents: before.agents + 1, sessions: before.sessions + 1 })
      yield* rt.idle(payload.agent_id, "60 seconds")
      expect(JSON.stringify(yield* rt.events(payload.agent_id))).toContain("Hello, all at once.")
    }), { timeout: 150_000 })

  it.effect("errors: offline machine, no model, no repository for a worktree, unknown session, another user's workspace", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { daemon, rt, workspace } = yield* workspaceSetup(provider)
      const path = { workspace_id: workspace.id }

      const unknownSession = yield* expectFailure(
        rt.client.workspaces.launchSession({ params: path, payload: { user_session_id: yield* newId(WorkspaceSessionId) } })
      )
      expect(unknownSession._tag).toBe("NotFound")

      const unknownResume = yield* expectFailure(
        rt.client.workspaces.launchSession({ params: path, payload: { resume_session_id: "not-a-session" } })
      )
      expect(unknownResume._tag).toBe("NotFound")

      const noModel = yield* rawRequest(
        HttpClientRequest.post(`/api/v1/workspaces/${workspace.id}/sessions`).pipe(
          HttpClientRequest.bearerToken(rt.owner.token),
          HttpClientRequest.bodyJsonUnsafe({ session_settings: { code: { default_provider: "Nope", providers: { Nope: {} } } } })
        )
      )
      expect(noModel.status).toBe(400)
      expect(noModel.json!.code).toBe("invalid_request")

      const bare = yield* rt.client.workspaces.create({
        payload: { name: "Bare", org_id: rt.org.id, project_id: rt.project.id, repository: {} }
      })
      const noMachine = yield* expectFailure(rt.client.workspaces.launchSession({ params: { workspace_id: bare.id }, payload: {} }))
      expect(noMachine._tag).toBe("InvalidRequest")
      const noRepo = yield* expectFailure(
        rt.client.workspaces.launchSession({
          params: { workspace_id: bare.id },
          payload: { machine_id: workspace.default_machine_id, worktree_name: "x" }
        })
      )
      expect(noRepo._tag).toBe("InvalidRequest")

      const stranger = yield* newUser("stranger")
      const hidden = yield* rawRequest(
        HttpClientRequest.post(`/api/v1/workspaces/${workspace.id}/sessions`).pipe(
          HttpClientRequest.bearerToken(stranger.token),
          HttpClientRequest.bodyJsonUnsafe({})
        )
      )
      expect(hidden.status).toBe(404)

      yield* Effect.promise(() => daemon.stop())
      const offline = yield* eventually(
        rawRequest(
          HttpClientRequest.post(`/api/v1/workspaces/${workspace.id}/sessions`).pipe(
            HttpClientRequest.bearerToken(rt.owner.token),
            HttpClientRequest.bodyJsonUnsafe({ worktree_name: "later" })
          )
        ),
        (response) => response.status === 409,
        "the machine offline",
        "45 seconds"
      )
      expect(offline.json).toEqual({
        status: "error",
        payload: { code: "daemon_runtime_unregistered", error: expect.stringContaining("No daemon") }
      })
    }), { timeout: 150_000 })
})
