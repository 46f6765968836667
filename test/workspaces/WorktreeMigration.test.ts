/**
 * Worktree migration with two real daemons and real git (docs/workspaces.md, "Migration"): the
 * worktree of machine A (a commit, an uncommitted change, an untracked file) is packed by A's
 * daemon into a checkpoint stored on the server, migrated to LOCAL machine B, and restored there
 * when the next session starts on B. Also: target_machine_id required, REMOTE's fields refused,
 * an offline target, a worktree whose agent is in a turn, REMOTE refusals, another user's
 * worktree, sessions on A (plain, on A's agent, resumed) refused once the worktree is B's. A
 * migration holds its worktree (a second migration, a new session, an input meanwhile: 409; the
 * hold gone when it ends or fails, and one left by a stopped server lapsing); a restore that
 * would drop commits of the target's copy is refused, its uncommitted work kept in a stash.
 */
import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect, Fiber } from "effect"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll } from "vitest"
import { describeRuntime } from "../runtime/RuntimeLayer.ts"
import { killDaemons } from "../support/Daemons.ts"
import { eventually } from "../support/Polling.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { expectFailure, newUser, rawRequest } from "../support/TestApp.ts"
import { gitIn, secondMachine, workspaceSetup } from "../support/Workspaces.ts"

afterAll(killDaemons)

describeRuntime("180 seconds")("worktree migration", (it) => {
  it.effect("checkpoint on machine A, migrate to LOCAL machine B, restored at the next session on B", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { machine, repo, rt, workspace } = yield* workspaceSetup(provider)
      const started = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "feature/move" }
      })
      const worktreeId = started.payload.worktree_id
      const [onA] = (yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } }))
        .filter((w) => w.id === worktreeId)
      const pathA = onA.path!
      // A commit, an uncommitted change to a tracked file, an untracked file.
      writeFileSync(join(pathA, "committed.txt"), "committed\n")
      gitIn(pathA, "add", "committed.txt")
      gitIn(pathA, "commit", "-q", "-m", "work on A")
      writeFileSync(join(pathA, "README.md"), "# Demo\nchanged on A, not committed\n")
      writeFileSync(join(pathA, "untracked.txt"), "untracked on A\n")
      const headA = gitIn(pathA, "rev-parse", "HEAD")

      // Machine B: a second daemon of the same user, in another directory.
      const { dirs: dirsB, machine: machineB } = yield* secondMachine(rt, machine)

      // target_machine_id is required for LOCAL.
      const missing = yield* rawRequest(
        HttpClientRequest.post(`/api/v1/worktrees/${worktreeId}/migrate`).pipe(
          HttpClientRequest.bearerToken(rt.owner.token),
          HttpClientRequest.bodyJsonUnsafe({ target_type: "LOCAL" })
        )
      )
      expect(missing.status).toBe(400)
      expect(missing.json!.code).toBe("invalid_request")
      // The fields of a REMOTE migration are refused, not ignored.
      const remoteFields = yield* rawRequest(
        HttpClientRequest.post(`/api/v1/worktrees/${worktreeId}/migrate`).pipe(
          HttpClientRequest.bearerToken(rt.owner.token),
          HttpClientRequest.bodyJsonUnsafe({
            target_type: "LOCAL",
            target_machine_id: machineB.id,
            source: "base_ref",
            worktree_name: "renamed"
          })
        )
      )
      expect(remoteFields.status).toBe(400)
      expect(remoteFields.json).toMatchObject({
        code: "invalid_request",
        issues: [
          { path: "/source", message: "is allowed only when target_type is REMOTE" },
          { path: "/worktree_name", message: "is allowed only when target_type is REMOTE" }
        ]
      })
      // An offline target (registered, never connected).
      const offline = yield* rt.client.machineRegistration.register({
        payload: { machine_name: "asleep", hostname: "h", platform: "linux", architecture: "x86_64", daemon_version: "0.1.0" }
      })
      const toOffline = yield* rawRequest(
        HttpClientRequest.post(`/api/v1/worktrees/${worktreeId}/migrate`).pipe(
          HttpClientRequest.bearerToken(rt.owner.token),
          HttpClientRequest.bodyJsonUnsafe({ target_type: "LOCAL", target_machine_id: offline.machine.id })
        )
      )
      expect(toOffline.status).toBe(409)
      expect(toOffline.json!.code).toBe("daemon_runtime_unregistered")
      // Another user does not see the worktree.
      const stranger = yield* newUser("stranger")
      const hidden = yield* expectFailure(
        stranger.client.workspaces.migrate({ params: { worktree_id: worktreeId }, payload: { target_type: "LOCAL", target_machine_id: machineB.id } })
      )
      expect(hidden._tag).toBe("NotFound")

      const migrated = yield* rt.client.workspaces.migrate({
        params: { worktree_id: worktreeId },
        payload: { target_type: "LOCAL", target_machine_id: machineB.id }
      })
      expect(migrated.status).toBe("migrated")
      const moved = migrated.worktree
      expect(moved.current_checkpoint_id).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect(moved).toMatchObject({
        id: worktreeId,
        name: "feature/move",
        worktree_type: "LOCAL",
        path: null,
        checkpoint_restore_pending: true,
        last_synced_checkpoint_id: moved.current_checkpoint_id,
        managed_machine_id: null,
        checkpoint_metadata: {
          format: "agent-platform-checkpoint/1",
          branch: "feature/move",
          commit: headA,
          uncommitted_changes: true,
          untracked_files: 1,
          source_machine_id: machine.id
        }
      })
      expect(moved.user_machine_path?.machine_id).toBe(machineB.id)
      // A is untouched.
      expect(readFileSync(join(pathA, "untracked.txt"), "utf8")).toBe("untracked on A\n")

      // The worktree is B's now: a session on A for it is refused until it is migrated back.
      const onA2 = yield* rawRequest(
        HttpClientRequest.post(`/api/v1/workspaces/${workspace.id}/sessions`).pipe(
          HttpClientRequest.bearerToken(rt.owner.token),
          HttpClientRequest.bodyJsonUnsafe({ machine_id: machine.id, worktree_name: "feature/move" })
        )
      )
      expect(onA2.status).toBe(409)
      expect(onA2.json!.code).toBe("conflict")
      // So is a new session on the agent of the session on A, or resuming that session.
      for (const payload of [{ agent_session_id: started.payload.agent_id }, { resume_session_id: started.payload.session_id }]) {
        const continued = yield* rawRequest(
          HttpClientRequest.post(`/api/v1/workspaces/${workspace.id}/sessions`).pipe(
            HttpClientRequest.bearerToken(rt.owner.token),
            HttpClientRequest.bodyJsonUnsafe(payload)
          )
        )
        expect(continued.status).toBe(409)
        expect(continued.json!.code).toBe("conflict")
        expect(String(continued.json!.error)).toContain(`is on machine ${machineB.id}`)
      }

      // The next session on B restores the checkpoint into the worktree there.
      const onB = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { machine_id: machineB.id, worktree_name: "feature/move" }
      })
      expect(onB.payload).toMatchObject({ worktree_id: worktreeId, machine_id: machineB.id })
      const [restored] = (yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } }))
        .filter((w) => w.id === worktreeId)
      expect(restored.checkpoint_restore_pending).toBe(false)
      expect(restored.current_checkpoint_id).toBe(moved.current_checkpoint_id)
      const pathB = restored.path!
      expect(pathB.startsWith(dirsB.work)).toBe(true)
      expect(restored.user_machine_path).toMatchObject({ machine_id: machineB.id, local_path: pathB })
      expect(gitIn(pathB, "rev-parse", "--abbrev-ref", "HEAD")).toBe("feature/move")
      expect(gitIn(pathB, "rev-parse", "HEAD")).toBe(headA)
      expect(readFileSync(join(pathB, "committed.txt"), "utf8")).toBe("committed\n")
      expect(readFileSync(join(pathB, "README.md"), "utf8")).toBe("# Demo\nchanged on A, not committed\n")
      expect(readFileSync(join(pathB, "untracked.txt"), "utf8")).toBe("untracked on A\n")
      expect(gitIn(pathB, "status", "--porcelain")).toContain("M README.md")
      expect(repo.startsWith(dirsB.work)).toBe(false)

      // REMOTE: needs the workspace's pool; from the base ref, needs sync_enabled; not provisioned here.
      const noPool = yield* expectFailure(
        rt.client.workspaces.migrate({ params: { worktree_id: worktreeId }, payload: { target_type: "REMOTE" } })
      )
      expect(noPool._tag).toBe("InvalidRequest")
      const noSync = yield* expectFailure(
        rt.client.workspaces.migrate({ params: { worktree_id: worktreeId }, payload: { target_type: "REMOTE", source: "base_ref" } })
      )
      expect(noSync._tag).toBe("Conflict")
    }), { timeout: 150_000 })

  it.effect("a worktree whose session's agent is in a turn is not migrated (409 state_transition_conflict)", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { machine, rt, workspace } = yield* workspaceSetup(provider)
      yield* provider.script([
        Reply.toolCall("write_file", { path: "WAIT.md", content: "waits for an approval\n" })
      ], { model: rt.slug })
      const started = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "busy", initial_prompt: "Write WAIT.md", session_settings: { code: { mode: "ask" } } }
      })
      yield* rt.waiting(started.payload.agent_id)
      const busy = yield* rawRequest(
        HttpClientRequest.post(`/api/v1/worktrees/${started.payload.worktree_id}/migrate`).pipe(
          HttpClientRequest.bearerToken(rt.owner.token),
          HttpClientRequest.bodyJsonUnsafe({ target_type: "LOCAL", target_machine_id: machine.id })
        )
      )
      expect(busy.status).toBe(409)
      expect(busy.json!.code).toBe("state_transition_conflict")
    }), { timeout: 150_000 })

  it.effect("a migration holds its worktree: a second migration, a new session and an input meanwhile are 409", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const sql = yield* SqlClient.SqlClient
      const { daemon, machine, rt, workspace } = yield* workspaceSetup(provider)
      const started = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "held" }
      })
      const worktreeId = started.payload.worktree_id
      const post = (path: string, body: Record<string, unknown>) =>
        rawRequest(
          HttpClientRequest.post(path).pipe(HttpClientRequest.bearerToken(rt.owner.token), HttpClientRequest.bodyJsonUnsafe(body))
        )
      const migrate = post(`/api/v1/worktrees/${worktreeId}/migrate`, { target_type: "LOCAL", target_machine_id: machine.id })
      const session = (body: Record<string, unknown>) => post(`/api/v1/workspaces/${workspace.id}/sessions`, body)

      // The laptop's daemon paused, the first migration waits for its checkpoint, holding the worktree.
      daemon.pause()
      const first = yield* Effect.forkChild(migrate)
      const refused = yield* eventually(
        session({ agent_session_id: started.payload.agent_id }),
        (answer) => answer.status === 409,
        "the worktree held by the migration",
        "30 seconds"
      ).pipe(Effect.tapCause(() => Effect.sync(daemon.resume)))
      expect(refused.json).toMatchObject({ code: "state_transition_conflict" })
      expect(String(refused.json!.error)).toContain(`Worktree ${worktreeId} is being migrated`)
      const second = yield* migrate
      expect(second.status).toBe(409)
      expect(second.json!.code).toBe("state_transition_conflict")
      expect(String(second.json!.error)).toContain("being migrated by another request")
      const placed = yield* session({ worktree_name: "held", initial_prompt: "write on the laptop" })
      expect(placed.status).toBe(409)
      expect(placed.json!.code).toBe("state_transition_conflict")
      const input = yield* expectFailure(rt.send(started.payload.agent_id, "write on the laptop"))
      expect(input._tag).toBe("StateTransitionConflict")
      expect(yield* rt.agent(started.payload.agent_id)).toMatchObject({ status: "idle", current_turn_id: null })
      daemon.resume()
      const done = yield* Fiber.join(first)
      expect(done.status).toBe(200)
      expect(done.json).toMatchObject({ status: "migrated", worktree: { id: worktreeId, checkpoint_restore_pending: true } })

      // Over: sessions and inputs are taken again (the checkpoint is restored at the session).
      const after = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "held" }
      })
      expect(after.payload.worktree_id).toBe(worktreeId)

      // A hold left by a server that stopped mid-migration blocks until it lapses, no longer.
      yield* sql`UPDATE worktrees SET migration_id = 'stopped-server', migration_held_until = now() + interval '1 hour'
                 WHERE id = ${worktreeId}`
      const blocked = yield* migrate
      expect(blocked.status).toBe(409)
      expect(blocked.json!.code).toBe("state_transition_conflict")
      yield* sql`UPDATE worktrees SET migration_held_until = now() - interval '1 second' WHERE id = ${worktreeId}`
      expect((yield* migrate).status).toBe(200)
      const [row] = yield* sql<{ migration_id: string | null }>`SELECT migration_id FROM worktrees WHERE id = ${worktreeId}`
      expect(row.migration_id).toBeNull()

      // A migration that fails releases its hold: the next one fails the same way, not with 409.
      const restored = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "held" }
      })
      const [placedRow] = (yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } }))
        .filter((w) => w.id === restored.payload.worktree_id)
      rmSync(placedRow.path!, { recursive: true, force: true })
      for (let attempt = 0; attempt < 2; attempt++) {
        const failed = yield* migrate
        expect(failed.status).toBe(422)
        expect(failed.json!.code).toBe("unprocessable")
      }
    }), { timeout: 150_000 })

  it.effect("a restore does not drop commits the checkpoint lacks (422, what to do); uncommitted work is stashed", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { machine, rt, workspace } = yield* workspaceSetup(provider)
      const started = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "stale" }
      })
      const worktreeId = started.payload.worktree_id
      const pathOf = Effect.map(
        rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } }),
        (listed) => listed.find((w) => w.id === worktreeId)!
      )
      const pathA = (yield* pathOf).path!
      writeFileSync(join(pathA, "a.txt"), "from A\n")
      gitIn(pathA, "add", "a.txt")
      gitIn(pathA, "commit", "-q", "-m", "on A")

      const { machine: machineB } = yield* secondMachine(rt, machine)
      yield* rt.client.workspaces.migrate({ params: { worktree_id: worktreeId }, payload: { target_type: "LOCAL", target_machine_id: machineB.id } })
      yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { machine_id: machineB.id, worktree_name: "stale" }
      })
      const pathB = (yield* pathOf).path!
      writeFileSync(join(pathB, "b.txt"), "from B\n")
      gitIn(pathB, "add", "b.txt")
      gitIn(pathB, "commit", "-q", "-m", "on B")
      const headB = gitIn(pathB, "rev-parse", "HEAD")

      // Meanwhile, on A's stale copy: a commit after the checkpoint, and an uncommitted change.
      writeFileSync(join(pathA, "late.txt"), "late on A\n")
      gitIn(pathA, "add", "late.txt")
      gitIn(pathA, "commit", "-q", "-m", "late on A")
      const late = gitIn(pathA, "rev-parse", "HEAD")
      writeFileSync(join(pathA, "README.md"), "# Demo\nscribbled on A\n")

      yield* rt.client.workspaces.migrate({ params: { worktree_id: worktreeId }, payload: { target_type: "LOCAL", target_machine_id: machine.id } })
      const launch = rawRequest(
        HttpClientRequest.post(`/api/v1/workspaces/${workspace.id}/sessions`).pipe(
          HttpClientRequest.bearerToken(rt.owner.token),
          HttpClientRequest.bodyJsonUnsafe({ machine_id: machine.id, worktree_name: "stale" })
        )
      )
      const refused = yield* launch
      expect(refused.status).toBe(422)
      expect(refused.json).toMatchObject({ status: "error", payload: { code: "unprocessable" } })
      const message = String((refused.json!.payload as Record<string, unknown>).error)
      expect(message).toContain("1 commit that the checkpoint does not contain")
      expect(message).toContain(`git -C ${pathA} branch stale-kept ${late.slice(0, 12)}`)
      // Nothing was changed on A, and the checkpoint still waits to be restored there.
      expect(gitIn(pathA, "rev-parse", "HEAD")).toBe(late)
      expect(readFileSync(join(pathA, "README.md"), "utf8")).toBe("# Demo\nscribbled on A\n")
      expect((yield* pathOf).checkpoint_restore_pending).toBe(true)

      // As the message says: the commit on a branch of its own, the restore goes on.
      gitIn(pathA, "branch", "stale-kept", late)
      const restored = yield* launch
      expect(restored.status).toBe(201)
      expect(gitIn(pathA, "rev-parse", "HEAD")).toBe(headB)
      expect(gitIn(pathA, "rev-parse", "--abbrev-ref", "HEAD")).toBe("stale")
      expect(readFileSync(join(pathA, "b.txt"), "utf8")).toBe("from B\n")
      expect(gitIn(pathA, "rev-parse", "stale-kept")).toBe(late)
      // The uncommitted change is kept in a stash entry.
      expect(readFileSync(join(pathA, "README.md"), "utf8")).toBe("# Demo\n")
      expect(gitIn(pathA, "stash", "list")).toContain("agent-platform: kept before restoring checkpoint of stale")
      expect(gitIn(pathA, "show", "stash@{0}:README.md")).toBe("# Demo\nscribbled on A")
    }), { timeout: 150_000 })
})
