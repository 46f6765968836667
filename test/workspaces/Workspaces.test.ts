/**
 * The workspace routes without a daemon (docs/workspaces.md): create (with its main worktree),
 * list, get, change, delete; the default machine must be one the user may use in the project;
 * another user's workspace is 404; an organization API key is refused on every route; a user
 * removed from the organization neither gets nor lists their workspace there.
 */
import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { MachineId, type WorkspaceId } from "../../src/domain/shared/Ids.ts"
import { MAX_WORKSPACES_PER_USER } from "../../src/services/workspaces/Workspaces.ts"
import { clientWith, describeApp, expectFailure, ID_PATTERN, joinOrganization, newId, newUser, outcomesAtOnce, rawRequest } from "../support/TestApp.ts"

const facts = (name: string, orgId: string) => ({
  machine_name: name,
  hostname: "host",
  platform: "linux",
  architecture: "x86_64",
  daemon_version: "0.1.0",
  directories: ["/tmp"],
  metadata: { org_id: orgId }
})

const ownerWithProject = Effect.gen(function*() {
  const owner = yield* newUser("workspaces")
  const org = yield* owner.client.organizations.create({ payload: { name: "Workspaces" } })
  const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
  const machine = yield* owner.client.machineRegistration.register({ payload: facts("laptop", org.id) })
  return { owner, org, project, machine: machine.machine }
})

/**
 * `copies` more of the workspace, as copies of it (ids: its 16 characters, then a count in
 * hexadecimal with 0, 1, 8, 9 spelled w, x, y, z, all of [a-z2-7]).
 */
const copyWorkspace = (id: WorkspaceId, copies: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO workspaces (id, user_id, org_id, project_id, name, repository_url, base_ref, default_machine_id,
        machine_pool_id, sync_enabled)
      SELECT 'wsp_' || left(substr(id, 5), 16) || translate(lpad(to_hex(i), 10, '0'), '0189', 'wxyz'), user_id, org_id, project_id, name,
        repository_url, base_ref, default_machine_id, machine_pool_id, sync_enabled
      FROM workspaces, generate_series(1, ${copies}) AS i WHERE id = ${id}`)

describeApp()("workspaces", (it) => {
  it.effect("create makes the main worktree; list, get, change, delete", () =>
    Effect.gen(function*() {
      const { machine, org, owner, project } = yield* ownerWithProject
      const created = yield* owner.client.workspaces.create({
        payload: {
          name: "My repo",
          org_id: org.id,
          project_id: project.id,
          repository: { url: "https://example.test/repo.git", base_ref: "main" },
          default_machine_id: machine.id
        }
      })
      expect(created.id).toMatch(ID_PATTERN("wsp"))
      expect(created).toMatchObject({
        name: "My repo",
        org_id: org.id,
        project_id: project.id,
        repository: { url: "https://example.test/repo.git", base_ref: "main" },
        default_machine_id: machine.id,
        machine_pool_id: null,
        sync_enabled: false
      })
      const worktrees = yield* owner.client.workspaces.listWorktrees({ params: { workspace_id: created.id } })
      expect(worktrees).toHaveLength(1)
      const [main] = worktrees
      expect(main.id).toMatch(ID_PATTERN("wtr"))
      expect(main).toMatchObject({
        workspace_id: created.id,
        is_main: true,
        name: null,
        path: null,
        worktree_type: "LOCAL",
        managed_machine_id: null,
        last_heartbeat_at: null,
        last_synced_checkpoint_id: null,
        checkpoint_restore_pending: false,
        current_checkpoint_id: null,
        checkpoint_metadata: {}
      })
      expect(main.user_machine_path?.machine_id).toBe(machine.id)
      expect(main.user_machine_path?.id).toMatch(ID_PATTERN("ump"))

      const raw = yield* rawRequest(
        HttpClientRequest.get(`/api/v1/worktrees/workspace/${created.id}`).pipe(HttpClientRequest.bearerToken(owner.token))
      )
      expect(raw.status).toBe(200)
      expect(Object.keys((JSON.parse(raw.text) as Array<object>)[0]).sort()).toEqual([
        "checkpoint_metadata",
        "checkpoint_restore_pending",
        "created_at",
        "current_checkpoint_id",
        "id",
        "is_main",
        "last_heartbeat_at",
        "last_synced_checkpoint_id",
        "managed_machine_id",
        "name",
        "path",
        "updated_at",
        "user_machine_path",
        "workspace_id",
        "worktree_type"
      ])

      expect((yield* owner.client.workspaces.list()).map((w) => w.id)).toEqual([created.id])
      expect(yield* owner.client.workspaces.get({ params: { workspace_id: created.id } })).toEqual(created)
      const changed = yield* owner.client.workspaces.update({
        params: { workspace_id: created.id },
        payload: { name: "Renamed", repository: { base_ref: "develop" }, default_machine_id: null, sync_enabled: true }
      })
      expect(changed).toMatchObject({
        name: "Renamed",
        repository: { url: "https://example.test/repo.git", base_ref: "develop" },
        default_machine_id: null,
        sync_enabled: true
      })
      const removed = yield* rawRequest(
        HttpClientRequest.delete(`/api/v1/workspaces/${created.id}`).pipe(HttpClientRequest.bearerToken(owner.token))
      )
      expect(removed.status).toBe(204)
      const gone = yield* expectFailure(owner.client.workspaces.get({ params: { workspace_id: created.id } }))
      expect(gone._tag).toBe("NotFound")
      expect(yield* owner.client.workspaces.list()).toEqual([])
    }))

  it.effect("a person has at most MAX_WORKSPACES_PER_USER: one more is 409 conflict, nothing made; deleting one makes room", () =>
    Effect.gen(function*() {
      const { org, owner, project } = yield* ownerWithProject
      const payload = { name: "One of many", org_id: org.id, project_id: project.id, repository: {} }
      const first = yield* owner.client.workspaces.create({ payload })
      yield* copyWorkspace(first.id, MAX_WORKSPACES_PER_USER - 1)
      const refused = yield* expectFailure(owner.client.workspaces.create({ payload }))
      expect(refused).toMatchObject({
        _tag: "Conflict",
        error: `You have ${MAX_WORKSPACES_PER_USER} workspaces, the most one person may have; delete one you no longer use to make another`
      })
      expect(yield* owner.client.workspaces.list()).toHaveLength(MAX_WORKSPACES_PER_USER)
      yield* owner.client.workspaces.remove({ params: { workspace_id: first.id } })
      const made = yield* owner.client.workspaces.create({ payload })
      expect(made.id).toMatch(ID_PATTERN("wsp"))
    }))

  it.effect("workspaces created at once stop at MAX_WORKSPACES_PER_USER: 50 at once, 10 short of it, make 10, the others are 409", () =>
    Effect.gen(function*() {
      const { org, owner, project } = yield* ownerWithProject
      const payload = { name: "One of many", org_id: org.id, project_id: project.id, repository: {} }
      const first = yield* owner.client.workspaces.create({ payload })
      yield* copyWorkspace(first.id, MAX_WORKSPACES_PER_USER - 11)
      const outcomes = yield* outcomesAtOnce(Array.from({ length: 50 }, () => owner.client.workspaces.create({ payload })))
      expect(outcomes.filter((outcome) => outcome === "succeeded")).toHaveLength(10)
      expect(outcomes.filter((outcome) => outcome !== "succeeded")).toEqual(Array(40).fill("Conflict"))
      expect(yield* owner.client.workspaces.list()).toHaveLength(MAX_WORKSPACES_PER_USER)
    }))

  it.effect("a LOCAL worktree whose machine is deleted is on no machine: type null, no user_machine_path, no path", () =>
    Effect.gen(function*() {
      const { machine, org, owner, project } = yield* ownerWithProject
      const other = yield* owner.client.machineRegistration.register({ payload: facts("desktop", org.id) })
      const workspace = (name: string, machineId: MachineId) =>
        owner.client.workspaces.create({
          payload: { name, org_id: org.id, project_id: project.id, repository: { url: "https://example.test/repo.git" }, default_machine_id: machineId }
        })
      const onLaptop = yield* workspace("On the laptop", machine.id)
      const onDesktop = yield* workspace("On the desktop", other.machine.id)
      const mainOf = (workspaceId: WorkspaceId) =>
        Effect.map(owner.client.workspaces.listWorktrees({ params: { workspace_id: workspaceId } }), ([main]) => main)

      yield* owner.client.machines.remove({ params: { orgID: org.id, machineID: machine.id } })
      const unplaced = yield* mainOf(onLaptop.id)
      expect(unplaced).toMatchObject({ worktree_type: null, path: null, managed_machine_id: null })
      expect(unplaced.user_machine_path).toBeUndefined()
      // The other machine's worktree is still LOCAL there.
      const kept = yield* mainOf(onDesktop.id)
      expect(kept.worktree_type).toBe("LOCAL")
      expect(kept.user_machine_path?.machine_id).toBe(other.machine.id)
    }))

  it.effect("validation: project access, usable default machine, pool of the organization, bad fields, a relative repository path", () =>
    Effect.gen(function*() {
      const { machine, org, owner, project } = yield* ownerWithProject
      const base = { name: "W", org_id: org.id, project_id: project.id, repository: {} }
      // Another member's personal machine is not usable by the owner.
      const member = yield* newUser("member")
      yield* joinOrganization(owner, org.id, member, "member")
      const memberMachine = yield* member.client.machineRegistration.register({ payload: facts("theirs", org.id) })
      const notUsable = yield* expectFailure(
        owner.client.workspaces.create({ payload: { ...base, default_machine_id: memberMachine.machine.id } })
      )
      expect(notUsable._tag).toBe("InvalidRequest")
      expect(notUsable._tag === "InvalidRequest" && notUsable.issues?.[0]?.path).toBe("/default_machine_id")
      const unknown = yield* expectFailure(
        owner.client.workspaces.create({ payload: { ...base, default_machine_id: yield* newId(MachineId) } })
      )
      expect(unknown._tag).toBe("InvalidRequest")
      // An organization machine not granted to the project is not usable; granted it is.
      const token = yield* owner.client.machines.createDaemonToken({ params: { orgID: org.id }, payload: { name: "d" } })
      const daemon = yield* clientWith(token.token)
      const orgMachine = yield* daemon.machineRegistration.register({ payload: facts("shared", org.id) })
      const notGranted = yield* expectFailure(
        owner.client.workspaces.create({ payload: { ...base, default_machine_id: orgMachine.machine.id } })
      )
      expect(notGranted._tag).toBe("InvalidRequest")
      yield* owner.client.machines.createGrant({
        params: { orgID: org.id, machineID: orgMachine.machine.id },
        payload: { target_project_id: project.id }
      })
      const granted = yield* owner.client.workspaces.create({ payload: { ...base, default_machine_id: orgMachine.machine.id } })
      expect(granted.default_machine_id).toBe(orgMachine.machine.id)
      // A stranger's project is not found; a member without project write access... members write by default.
      const stranger = yield* newUser("stranger")
      const strangers = yield* expectFailure(stranger.client.workspaces.create({ payload: base }))
      expect(strangers._tag).toBe("NotFound")
      // Unknown fields, a bad branch name, a bad name.
      const badRef = yield* rawRequest(
        HttpClientRequest.post("/api/v1/workspaces").pipe(
          HttpClientRequest.bearerToken(owner.token),
          HttpClientRequest.bodyJsonUnsafe({ ...base, repository: { base_ref: "bad..ref" } })
        )
      )
      expect(badRef.status).toBe(400)
      expect(badRef.json!.code).toBe("invalid_request")
      const extra = yield* rawRequest(
        HttpClientRequest.post("/api/v1/workspaces").pipe(
          HttpClientRequest.bearerToken(owner.token),
          HttpClientRequest.bodyJsonUnsafe({ ...base, colour: "red" })
        )
      )
      expect(extra.status).toBe(400)
      // A relative path would be relative to nothing on the machine.
      const relative = yield* rawRequest(
        HttpClientRequest.post("/api/v1/workspaces").pipe(
          HttpClientRequest.bearerToken(owner.token),
          HttpClientRequest.bodyJsonUnsafe({ ...base, repository: { url: "repo" } })
        )
      )
      expect(relative.status).toBe(400)
      expect(relative.json).toMatchObject({
        code: "invalid_request",
        issues: [{ path: "/repository/url", message: expect.stringContaining("absolute path") }]
      })
      const scpLike = yield* owner.client.workspaces.create({
        payload: { ...base, repository: { url: "git@git.example.test:me/repo.git" } }
      })
      expect(scpLike.repository.url).toBe("git@git.example.test:me/repo.git")
      const relativeChange = yield* rawRequest(
        HttpClientRequest.patch(`/api/v1/workspaces/${scpLike.id}`).pipe(
          HttpClientRequest.bearerToken(owner.token),
          HttpClientRequest.bodyJsonUnsafe({ repository: { url: "../repo" } })
        )
      )
      expect(relativeChange.status).toBe(400)
      expect(relativeChange.json!.issues).toEqual([
        expect.objectContaining({ path: "/repository/url", message: expect.stringContaining("absolute path") })
      ])
      const noMachine = yield* owner.client.workspaces.create({ payload: base })
      const [main] = yield* owner.client.workspaces.listWorktrees({ params: { workspace_id: noMachine.id } })
      expect(main.worktree_type).toBeNull()
      expect(main.user_machine_path).toBeUndefined()
      expect(machine.id).toMatch(/^mch_/)
    }))

  it.effect("a session's metadata is at most 64 keys and 16 KiB as compact JSON, refused before anything is started", () =>
    Effect.gen(function*() {
      const { org, owner, project } = yield* ownerWithProject
      const workspace = yield* owner.client.workspaces.create({
        payload: { name: "W", org_id: org.id, project_id: project.id, repository: {} }
      })
      const launch = (metadata: unknown) =>
        rawRequest(
          HttpClientRequest.post(`/api/v1/workspaces/${workspace.id}/sessions`).pipe(
            HttpClientRequest.bearerToken(owner.token),
            HttpClientRequest.bodyJsonUnsafe({ metadata })
          )
        )
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])), "must have at most 64 keys"],
        [{ v: "x".repeat(16 * 1024) }, "must be at most 16384 bytes as compact JSON (got 16392)"]
      ]
      for (const [metadata, message] of cases) {
        const response = yield* launch(metadata)
        expect(response.status).toBe(400)
        expect(response.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/metadata", message }] })
      }
      // Within the limits the route runs: this workspace has no machine to start the session on.
      const within = yield* launch({ team: "blue" })
      expect(within.status).toBe(400)
      expect(within.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/machine_id" }] })
    }))

  it.effect("a worktree name git would refuse as a branch is invalid_request at /worktree_name, before anything is started; base_ref follows git's ref rules", () =>
    Effect.gen(function*() {
      const { org, owner, project } = yield* ownerWithProject
      const workspace = yield* owner.client.workspaces.create({
        payload: { name: "W", org_id: org.id, project_id: project.id, repository: {} }
      })
      const send = (method: "POST" | "PATCH", path: string, body: unknown) =>
        rawRequest(
          HttpClientRequest.make(method)(path).pipe(
            HttpClientRequest.bearerToken(owner.token),
            HttpClientRequest.bodyJsonUnsafe(body)
          )
        )
      const launch = (worktree_name: string) => send("POST", `/api/v1/workspaces/${workspace.id}/sessions`, { worktree_name })
      const PART_DOT = "must not have a part (between slashes) starting with ."
      const SLASHES = "must not start or end with /, nor contain //"
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["HEAD", "must not be HEAD, which git reserves for the current commit"],
        [".hidden", PART_DOT],
        ["feature/.hidden", PART_DOT],
        ["refs/heads/x", "must not start with refs/: give the branch's own name (main, not refs/heads/main)"],
        ["x.lock/y", "must not have a part (between slashes) ending with .lock"],
        ["x.lock", "must not have a part (between slashes) ending with .lock"],
        ["/x", SLASHES],
        ["x/", SLASHES],
        ["x//y", SLASHES],
        ["x.", "must not end with ."],
        ["x..y", "must not contain .."],
        ["-x", "must not start with -"],
        ["a b", "must be 1 to 100 characters of [A-Za-z0-9._/-]"],
        ["x@{1}", "must be 1 to 100 characters of [A-Za-z0-9._/-]"],
        ["x~1", "must be 1 to 100 characters of [A-Za-z0-9._/-]"]
      ]
      for (const [name, message] of cases) {
        const response = yield* launch(name)
        expect(response.status, name).toBe(400)
        expect(response.json, name).toMatchObject({
          code: "invalid_request",
          error: expect.stringContaining(message),
          issues: [{ path: "/worktree_name", message }]
        })
      }
      // Names git takes pass the check: this workspace has no machine to start the session on.
      for (const name of ["feature/x.y", "head", "x/HEAD", "v1.2-rc_3"]) {
        const within = yield* launch(name)
        expect(within.status, name).toBe(400)
        expect(within.json, name).toMatchObject({ code: "invalid_request", issues: [{ path: "/machine_id" }] })
      }

      // base_ref names a ref to start from: HEAD and a full ref name are refs, the rules of any ref still hold.
      const base = (base_ref: string) => send("PATCH", `/api/v1/workspaces/${workspace.id}`, { repository: { base_ref } })
      for (const ref of ["HEAD", "refs/heads/main", "origin/main"]) {
        const changed = yield* base(ref)
        expect(changed.status, ref).toBe(200)
        expect(changed.json, ref).toMatchObject({ repository: { base_ref: ref } })
      }
      const hidden = yield* base("origin/.hidden")
      expect(hidden.status).toBe(400)
      expect(hidden.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/repository/base_ref", message: PART_DOT }] })
    }))

  it.effect("another user's workspace is 404 on every route; an organization API key is refused", () =>
    Effect.gen(function*() {
      const { org, owner, project } = yield* ownerWithProject
      const created = yield* owner.client.workspaces.create({
        payload: { name: "Mine", org_id: org.id, project_id: project.id, repository: {} }
      })
      // Even a fellow owner of the organization does not see it.
      const other = yield* newUser("other")
      yield* joinOrganization(owner, org.id, other, "owner")
      const path = { workspace_id: created.id }
      for (
        const attempt of [
          other.client.workspaces.get({ params: path }),
          other.client.workspaces.update({ params: path, payload: { name: "x" } }),
          other.client.workspaces.remove({ params: path }),
          other.client.workspaces.listWorktrees({ params: path })
        ]
      ) {
        const failure = yield* expectFailure(attempt as Effect.Effect<unknown, { readonly _tag: string }>)
        expect(failure._tag).toBe("NotFound")
      }
      expect(yield* other.client.workspaces.list()).toEqual([])
      const raw = yield* rawRequest(
        HttpClientRequest.get(`/api/v1/workspaces/${created.id}`).pipe(HttpClientRequest.bearerToken(other.token))
      )
      expect(raw.status).toBe(404)
      expect(raw.json!.code).toBe("not_found")

      const key = yield* owner.client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "ci", role: "admin" } })
      const asOrg = yield* clientWith(key.token)
      const [main] = yield* owner.client.workspaces.listWorktrees({ params: path })
      for (
        const attempt of [
          asOrg.workspaces.list(),
          asOrg.workspaces.get({ params: path }),
          asOrg.workspaces.update({ params: path, payload: { name: "x" } }),
          asOrg.workspaces.remove({ params: path }),
          asOrg.workspaces.launchSession({ params: path, payload: {} }),
          asOrg.workspaces.listWorktrees({ params: path }),
          asOrg.workspaces.migrate({ params: { worktree_id: main.id }, payload: { target_type: "LOCAL", target_machine_id: null } })
        ]
      ) {
        const failure = yield* expectFailure(attempt as Effect.Effect<unknown, { readonly _tag: string }>)
        expect(failure._tag).toBe("Forbidden")
      }
      const refused = yield* rawRequest(
        HttpClientRequest.post("/api/v1/workspaces").pipe(
          HttpClientRequest.bearerToken(key.token),
          HttpClientRequest.bodyJsonUnsafe({ name: "W", org_id: org.id, project_id: project.id, repository: {} })
        )
      )
      expect(refused.status).toBe(403)
      expect(refused.json!.code).toBe("forbidden")
      expect(String(refused.json!.error)).toContain("personal API key")
    }))

  it.effect("a user removed from the organization no longer finds their workspace there, in the list either", () =>
    Effect.gen(function*() {
      const { org, owner, project } = yield* ownerWithProject
      const member = yield* newUser("leaving")
      yield* joinOrganization(owner, org.id, member, "admin")
      const created = yield* member.client.workspaces.create({
        payload: { name: "Theirs", org_id: org.id, project_id: project.id, repository: {} }
      })
      expect((yield* member.client.workspaces.list()).map((w) => w.id)).toEqual([created.id])
      yield* owner.client.members.remove({ params: { orgID: org.id, userID: member.user.id } })
      const gone = yield* expectFailure(member.client.workspaces.get({ params: { workspace_id: created.id } }))
      expect(gone._tag).toBe("NotFound")
      expect(yield* member.client.workspaces.list()).toEqual([])
    }))
})
