/**
 * A worktree migrated to REMOTE (docs/workspaces.md, "Migration"): the LOCAL machine's daemon
 * packs the worktree, the server stores the checkpoint, the workspace's `local` pool starts a
 * machine (a real daemon process on this host) for the worktree's agent, and the checkpoint is
 * restored there: committed, uncommitted and untracked work arrive. The pool machine is deleted
 * at the end (its daemon stopped by the pool), and the worktree comes back to LOCAL from its last
 * checkpoint; so does a worktree made fresh from the base ref (packed once made). A worktree that
 * leaves a sandbox gives the sandbox's machine back to the pool.
 */
import { layer } from "@effect/vitest"
import { expect } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect, Fiber, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll } from "vitest"
import type { MachineId } from "../../src/domain/shared/Ids.ts"
import { killDaemons } from "../support/Daemons.ts"
import { LOCAL_PROVIDER_KEY, LocalPoolServerLive } from "../support/LocalPoolServer.ts"
import { statementWaits } from "../support/HeldAgent.ts"
import { eventually } from "../support/Polling.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import type { RuntimeProject } from "../support/RuntimeProject.ts"
import { Reply, ScriptedProvider } from "../support/ScriptedProvider.ts"
import { expectFailure } from "../support/TestApp.ts"
import { gitIn, workspaceSetup } from "../support/Workspaces.ts"

const ORIGINS = join(import.meta.dirname, "..", "..", ".scratch", "origins")
const origins: Array<string> = []

afterAll(() => {
  killDaemons()
  for (const origin of origins) rmSync(origin, { recursive: true, force: true })
})

/**
 * A `local` pool of two machines named `name`, granted to the project, on this test's local key.
 * Whatever happens in the test, the pool's machines (daemon processes on this host) are deleted.
 */
const localPool = (rt: RuntimeProject, name: string) =>
  Effect.gen(function*() {
    const orgID = rt.org.id
    const key = yield* rt.client.secrets.create({ params: { orgID }, payload: { name: "Local key", value: Redacted.make(LOCAL_PROVIDER_KEY) } })
    const pool = yield* rt.client.machinePools.create({
      params: { orgID },
      payload: {
        name,
        provider: "local",
        provider_auth_secret_id: key.id,
        default_machine_provider_options: {},
        max_total_machines: 2,
        default_machine_memory_mb: 512
      }
    })
    yield* rt.client.machinePools.createGrant({ params: { orgID, poolID: pool.id }, payload: { target_project_id: rt.project.id } })
    yield* Effect.addFinalizer(() =>
      rt.client.machines.list({ params: { orgID }, query: { limit: 100 } }).pipe(
        Effect.flatMap((page) =>
          Effect.forEach(
            page.data.filter((machine) => machine.name.startsWith(name) && machine.status !== "deleted"),
            (machine) => Effect.ignore(rt.client.machines.remove({ params: { orgID, machineID: machine.id } }))
          )
        ),
        Effect.ignore
      )
    )
    return pool
  })

layer(LocalPoolServerLive, { timeout: "180 seconds", excludeTestServices: true })("REMOTE worktrees", (it) => {
  it.effect("migrate to REMOTE: a pool machine is started and the checkpoint restored there", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { repo, rt, workspace } = yield* workspaceSetup(provider)
      const orgID = rt.org.id
      const pool = yield* localPool(rt, "sandboxes")
      yield* rt.client.workspaces.update({ params: { workspace_id: workspace.id }, payload: { machine_pool_id: pool.id } })

      const started = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "feature/remote" }
      })
      const worktreeId = started.payload.worktree_id
      const [local] = (yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } }))
        .filter((w) => w.id === worktreeId)
      const pathA = local.path!
      writeFileSync(join(pathA, "remote.txt"), "committed for the sandbox\n")
      gitIn(pathA, "add", "remote.txt")
      gitIn(pathA, "commit", "-q", "-m", "for the sandbox")
      writeFileSync(join(pathA, "README.md"), "# Demo\nuncommitted, for the sandbox\n")
      writeFileSync(join(pathA, "scratch.txt"), "untracked, for the sandbox\n")
      const head = gitIn(pathA, "rev-parse", "HEAD")

      const migrated = yield* rt.client.workspaces.migrate({
        params: { worktree_id: worktreeId },
        payload: { target_type: "REMOTE" }
      })
      expect(migrated.status).toBe("migrated")
      const remote = migrated.worktree
      expect(remote).toMatchObject({
        id: worktreeId,
        worktree_type: "REMOTE",
        checkpoint_restore_pending: false,
        checkpoint_metadata: { branch: "feature/remote", commit: head, uncommitted_changes: true, untracked_files: 1 }
      })
      expect(remote.current_checkpoint_id).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect(remote.last_synced_checkpoint_id).toBe(remote.current_checkpoint_id)
      expect(remote.user_machine_path).toBeUndefined()
      expect(remote.last_heartbeat_at).not.toBeNull()
      const machineId = remote.managed_machine_id!
      const poolMachine = yield* rt.client.machines.get({ params: { orgID, machineID: machineId } })
      expect(poolMachine.name.startsWith("sandboxes")).toBe(true)
      const pathB = remote.path!
      expect(pathB).not.toBe(pathA)
      expect(gitIn(pathB, "rev-parse", "--abbrev-ref", "HEAD")).toBe("feature/remote")
      expect(gitIn(pathB, "rev-parse", "HEAD")).toBe(head)
      expect(readFileSync(join(pathB, "remote.txt"), "utf8")).toBe("committed for the sandbox\n")
      expect(readFileSync(join(pathB, "README.md"), "utf8")).toBe("# Demo\nuncommitted, for the sandbox\n")
      expect(readFileSync(join(pathB, "scratch.txt"), "utf8")).toBe("untracked, for the sandbox\n")

      // A session on the laptop is refused while the worktree is REMOTE; without a machine, the
      // session works in the sandbox, on the agent the migration started there.
      const elsewhere = yield* Effect.result(rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "feature/remote", machine_id: started.payload.machine_id }
      }))
      expect(elsewhere._tag === "Failure" && elsewhere.failure._tag).toBe("Conflict")
      const inSandbox = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "feature/remote", metadata: { from: "phone" } }
      })
      expect(inSandbox.status).toBe("ok")
      expect(inSandbox.payload).toMatchObject({ worktree_id: worktreeId, machine_id: machineId })
      expect(inSandbox.payload.session_id).not.toBe(started.payload.session_id)
      expect(inSandbox.payload.agent_id).not.toBe(started.payload.agent_id)
      const again = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "feature/remote", machine_id: machineId }
      })
      expect(again.payload).toMatchObject({ agent_id: inSandbox.payload.agent_id, machine_id: machineId })
      // The sandbox's agent works in the worktree: its tools start there.
      yield* provider.script([
        Reply.toolCall("write_file", { path: "from-sandbox.txt", content: "written in the sandbox\n" }),
        Reply.text("Written.")
      ], { model: rt.slug })
      yield* rt.send(inSandbox.payload.agent_id, "Write from-sandbox.txt")
      yield* rt.idle(inSandbox.payload.agent_id, "60 seconds")
      expect((yield* rt.toolCalls(inSandbox.payload.agent_id)).map((call) => [call.name, call.outcome]))
        .toEqual([["write_file", "succeeded"]])
      expect(readFileSync(join(pathB, "from-sandbox.txt"), "utf8")).toBe("written in the sandbox\n")

      // last_heartbeat_at follows the sandbox daemon's heartbeats (every 10 s).
      const listedRemote = rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } }).pipe(
        Effect.map((listed) => listed.find((w) => w.id === worktreeId)!)
      )
      const beating = yield* eventually(
        listedRemote,
        (w) => w.last_heartbeat_at!.getTime() > remote.last_heartbeat_at!.getTime(),
        "the REMOTE worktree's heartbeat to move",
        "30 seconds"
      )
      const seen = yield* rt.client.machines.get({ params: { orgID, machineID: machineId } })
      expect(beating.last_heartbeat_at!.getTime()).toBeLessThanOrEqual(seen.last_seen_at.getTime())

      // From the base ref: refused without sync_enabled; with it, a new worktree of that name on a
      // pool machine, cloned from the repository's URL.
      const noSync = yield* Effect.result(rt.client.workspaces.migrate({
        params: { worktree_id: worktreeId },
        payload: { target_type: "REMOTE", source: "base_ref", worktree_name: "fresh" }
      }))
      expect(noSync._tag === "Failure" && noSync.failure._tag).toBe("Conflict")
      // A sandboxed pool machine sees the host read-only but not its /tmp: the origin lives in the checkout.
      const origin = join(ORIGINS, `origin-${randomBytes(6).toString("hex")}.git`)
      mkdirSync(ORIGINS, { recursive: true })
      execFileSync("git", ["clone", "-q", "--bare", repo, origin])
      origins.push(origin)
      // A clone that fails leaves no worktree behind: the same name can be tried again.
      yield* rt.client.workspaces.update({
        params: { workspace_id: workspace.id },
        payload: { sync_enabled: true, repository: { url: `file://${origin}-missing` } }
      })
      const unreachable = yield* Effect.result(rt.client.workspaces.migrate({
        params: { worktree_id: worktreeId },
        payload: { target_type: "REMOTE", source: "base_ref", worktree_name: "fresh" }
      }))
      expect(unreachable._tag === "Failure" && unreachable.failure._tag).toBe("Unprocessable")
      expect((yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } })).map((w) => w.name))
        .toEqual([null, "feature/remote"])
      yield* rt.client.workspaces.update({
        params: { workspace_id: workspace.id },
        payload: { repository: { url: `file://${origin}` } }
      })
      const fresh = yield* rt.client.workspaces.migrate({
        params: { worktree_id: worktreeId },
        payload: { target_type: "REMOTE", source: "base_ref", worktree_name: "fresh" }
      })
      expect(fresh.worktree.id).not.toBe(worktreeId)
      expect(fresh.worktree).toMatchObject({
        name: "fresh",
        worktree_type: "REMOTE",
        is_main: false,
        checkpoint_metadata: { branch: "fresh", commit: gitIn(repo, "rev-parse", "main"), source_machine_id: fresh.worktree.managed_machine_id }
      })
      // Packed once made: its first checkpoint is what brings it back if its sandbox goes.
      expect(fresh.worktree.current_checkpoint_id).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect(fresh.worktree.last_synced_checkpoint_id).toBe(fresh.worktree.current_checkpoint_id)
      expect(gitIn(fresh.worktree.path!, "rev-parse", "--abbrev-ref", "HEAD")).toBe("fresh")
      expect(gitIn(fresh.worktree.path!, "rev-parse", "HEAD")).toBe(gitIn(repo, "rev-parse", "main"))
      expect(readFileSync(join(fresh.worktree.path!, "README.md"), "utf8")).toBe("# Demo\n")
      const names = (yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } })).map((w) => w.name)
      expect(names).toEqual([null, "feature/remote", "fresh"])

      // The pool machines go away with their daemons.
      for (const id of [machineId, fresh.worktree.managed_machine_id!]) {
        yield* rt.client.machines.remove({ params: { orgID, machineID: id } })
        yield* eventually(
          rt.client.machines.get({ params: { orgID, machineID: id } }).pipe(Effect.result),
          (found) => found._tag === "Failure" || found.success.status === "deleted",
          "the pool machine deleted",
          "60 seconds"
        )
      }
      // Its sandbox gone, the REMOTE worktree takes no session until it is migrated to LOCAL.
      const sandboxGone = yield* Effect.result(rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "feature/remote" }
      }))
      expect(sandboxGone._tag === "Failure" && sandboxGone.failure._tag).toBe("Conflict")
      // Migrated to LOCAL, it comes back as of its last checkpoint (no daemon is asked for one).
      const back = yield* rt.client.workspaces.migrate({
        params: { worktree_id: worktreeId },
        payload: { target_type: "LOCAL", target_machine_id: started.payload.machine_id }
      })
      expect(back.worktree).toMatchObject({
        worktree_type: "LOCAL",
        path: null,
        managed_machine_id: null,
        checkpoint_restore_pending: true,
        current_checkpoint_id: remote.current_checkpoint_id
      })
      writeFileSync(join(pathA, "remote.txt"), "changed on the laptop meanwhile\n")
      const restored = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "feature/remote" }
      })
      expect(restored.payload).toMatchObject({ worktree_id: worktreeId, machine_id: started.payload.machine_id })
      expect(readFileSync(join(pathA, "remote.txt"), "utf8")).toBe("committed for the sandbox\n")
      expect(readFileSync(join(pathA, "scratch.txt"), "utf8")).toBe("untracked, for the sandbox\n")
      // The laptop's change made meanwhile is kept in a stash entry, not discarded.
      expect(gitIn(pathA, "show", "stash@{0}:remote.txt")).toBe("changed on the laptop meanwhile")

      // The fresh worktree's sandbox is gone too: it comes back to the laptop from its first checkpoint.
      const freshBack = yield* rt.client.workspaces.migrate({
        params: { worktree_id: fresh.worktree.id },
        payload: { target_type: "LOCAL", target_machine_id: started.payload.machine_id }
      })
      expect(freshBack.worktree).toMatchObject({
        worktree_type: "LOCAL",
        checkpoint_restore_pending: true,
        current_checkpoint_id: fresh.worktree.current_checkpoint_id
      })
      yield* rt.client.workspaces.launchSession({ params: { workspace_id: workspace.id }, payload: { worktree_name: "fresh" } })
      const freshLocal = (yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } }))
        .find((w) => w.id === fresh.worktree.id)!
      expect(freshLocal.checkpoint_restore_pending).toBe(false)
      expect(gitIn(freshLocal.path!, "rev-parse", "--abbrev-ref", "HEAD")).toBe("fresh")
      expect(readFileSync(join(freshLocal.path!, "README.md"), "utf8")).toBe("# Demo\n")
    }), { timeout: 170_000 })

  it.effect("a worktree that leaves a sandbox gives its machine back to the pool", () =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { rt, workspace } = yield* workspaceSetup(provider)
      const orgID = rt.org.id
      // Room for two machines: a REMOTE to REMOTE move needs both while it runs.
      const pool = yield* localPool(rt, "moves")
      yield* rt.client.workspaces.update({ params: { workspace_id: workspace.id }, payload: { machine_pool_id: pool.id } })
      const started = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: "feature/moves" }
      })
      const worktreeId = started.payload.worktree_id
      const laptopPath = (yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } }))
        .find((w) => w.id === worktreeId)!.path!
      writeFileSync(join(laptopPath, "moved.txt"), "moves with the worktree\n")
      const toRemote = rt.client.workspaces.migrate({ params: { worktree_id: worktreeId }, payload: { target_type: "REMOTE" } })
      const released = (machineId: MachineId) =>
        eventually(
          rt.client.machines.get({ params: { orgID, machineID: machineId } }),
          (machine) => machine.status === "deleted",
          `sandbox ${machineId} given back to the pool`,
          "30 seconds"
        )

      const first = (yield* toRemote).worktree
      const sandbox1 = first.managed_machine_id!
      const liveMachines = rt.client.machines.list({ params: { orgID }, query: { limit: 100 } }).pipe(
        Effect.map((page) => page.data.filter((machine) => machine.name.startsWith("moves") && machine.status !== "deleted"))
      )
      // A move that cannot be recorded whole (the sandbox's session refused, as by a server stopped
      // there) leaves the worktree where it was, its sandbox running, and gives back the machine
      // started for it.
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE FUNCTION refuse_session_8271() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN RAISE EXCEPTION 'not today'; END $$`
      yield* sql`CREATE TRIGGER refuse_session_8271 BEFORE INSERT ON workspace_sessions FOR EACH ROW EXECUTE FUNCTION refuse_session_8271()`
      expect((yield* expectFailure(toRemote))._tag).toBe("InternalError")
      yield* sql`DROP FUNCTION refuse_session_8271() CASCADE`
      const stayed = (yield* rt.client.workspaces.listWorktrees({ params: { workspace_id: workspace.id } })).find((w) => w.id === worktreeId)!
      expect(stayed).toMatchObject({ worktree_type: "REMOTE", managed_machine_id: sandbox1 })
      const left = yield* eventually(liveMachines, (live) => live.length === 1, "the failed move's machine given back", "30 seconds")
      expect(left.map((machine) => machine.id)).toEqual([sandbox1])
      expect(["online", "idle"]).toContain(left[0].status)
      // REMOTE to REMOTE: the work moves to a new sandbox, the one it left is deleted.
      const second = (yield* toRemote).worktree
      const sandbox2 = second.managed_machine_id!
      expect(sandbox2).not.toBe(sandbox1)
      expect(readFileSync(join(second.path!, "moved.txt"), "utf8")).toBe("moves with the worktree\n")
      yield* released(sandbox1)
      // To LOCAL: the sandbox is deleted with the move.
      const local = (yield* rt.client.workspaces.migrate({
        params: { worktree_id: worktreeId },
        payload: { target_type: "LOCAL", target_machine_id: started.payload.machine_id }
      })).worktree
      expect(local).toMatchObject({ worktree_type: "LOCAL", managed_machine_id: null, checkpoint_restore_pending: true })
      yield* released(sandbox2)
      const usage = (yield* rt.client.machinePools.get({ params: { orgID, poolID: pool.id } })).usage
      expect(usage).toMatchObject({ machines: 0 })
      // So the pool has room for the next moves: a third sandbox, without waiting for the first two to idle out.
      const third = (yield* toRemote).worktree
      expect([sandbox1, sandbox2]).not.toContain(third.managed_machine_id)
      expect(readFileSync(join(third.path!, "moved.txt"), "utf8")).toBe("moves with the worktree\n")
      // Deleting the workspace deletes the sandbox of its REMOTE worktree with it.
      yield* rt.client.workspaces.remove({ params: { workspace_id: workspace.id } })
      yield* released(third.managed_machine_id!)
      expect((yield* rt.client.machinePools.get({ params: { orgID, poolID: pool.id } })).usage).toMatchObject({ machines: 0 })
    }), { timeout: 170_000 })

  /**
   * A move to REMOTE recorded while the workspace or its project is deleted: the move's
   * transaction is held at its session's INSERT (the test's lock on the sessions' table), having
   * locked what it locks before, while the deletion starts; then both go on. Each is answered as
   * it would be one after the other, never 500 (before, the move held the worktree's row and
   * waited for a share of the workspace's or the sandbox agent's row, which the deletion held
   * while it waited for the worktree's: deadlock detected).
   */
  const movedWhileDeleted = (deletion: "workspace" | "project") =>
    Effect.gen(function*() {
      const provider = yield* ScriptedProvider
      const { rt, workspace } = yield* workspaceSetup(provider)
      const pool = yield* localPool(rt, `held-${deletion}`)
      yield* rt.client.workspaces.update({ params: { workspace_id: workspace.id }, payload: { machine_pool_id: pool.id } })
      const started = yield* rt.client.workspaces.launchSession({
        params: { workspace_id: workspace.id },
        payload: { worktree_name: `feature/held-${deletion}` }
      })
      const sql = yield* SqlClient.SqlClient
      const { deleting, moving } = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE workspace_sessions IN SHARE ROW EXCLUSIVE MODE`
        const moving = yield* Effect.forkChild(Effect.result(rt.client.workspaces.migrate({
          params: { worktree_id: started.payload.worktree_id },
          payload: { target_type: "REMOTE" }
        })))
        // The move's session waits at its INSERT; a move that ends first fails the test with its answer.
        yield* statementWaits(sql, "%INSERT INTO workspace_sessions%", 1, "the move's session, at its INSERT", "120 seconds").pipe(
          Effect.raceFirst(Effect.flatMap(Fiber.join(moving), (ended) =>
            Effect.die(new Error(`the move ended before its session's INSERT waited: ${JSON.stringify(ended)}`))))
        )
        const deleting = yield* Effect.forkChild(Effect.result(
          deletion === "workspace"
            ? rt.client.workspaces.remove({ params: { workspace_id: workspace.id } })
            : rt.client.projects.remove({ params: rt.projectPath })
        ))
        // The deletion waits too (behind the move's shares of the workspace's and the agent's rows).
        yield* statementWaits(sql, "%", 2, `the ${deletion}'s deletion, behind the move`)
        return { deleting, moving }
      })).pipe(Effect.orDie)
      const moved = yield* Fiber.join(moving)
      const deleted = yield* Fiber.join(deleting)
      expect(moved._tag === "Success" ? moved.success.status : moved.failure).toBe("migrated")
      expect(deleted._tag === "Success" ? "deleted" : deleted.failure).toBe("deleted")
      expect(yield* expectFailure(rt.client.workspaces.get({ params: { workspace_id: workspace.id } })))
        .toMatchObject({ _tag: "NotFound" })
    })

  it.effect.skipIf(usesEmbeddedDatabase)("a workspace deleted while its worktree's move to REMOTE is recorded: the move, then the deletion", () =>
    movedWhileDeleted("workspace"), { timeout: 170_000 })

  it.effect.skipIf(usesEmbeddedDatabase)("a project deleted while a worktree's move to REMOTE is recorded: the move, then the deletion", () =>
    movedWhileDeleted("project"), { timeout: 170_000 })
})
