/**
 * Machines through the public surface: daemon tokens, registration (daemon token, personal key,
 * re-registration, metadata limits), the machines routes and grants, cross-tenant isolation, and
 * real daemons (child processes) connecting over the machine WebSocket, two of them with one state
 * file copied.
 */
import { HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { copyFileSync } from "node:fs"
import { afterAll } from "vitest"
import WebSocket from "ws"
import { MachineId } from "../../src/domain/shared/Ids.ts"
import { daemonDirs, killDaemons, serverUrl, startDaemon } from "../support/Daemons.ts"
import { lockWaits, waitedOn } from "../support/HeldAgent.ts"
import { eventually } from "../support/Polling.ts"
import { usesEmbeddedDatabase } from "../support/Processes.ts"
import { clientWith, describeApp, expectFailure, ID_PATTERN, newId, newUser, rawRequest } from "../support/TestApp.ts"

afterAll(killDaemons)

const facts = (name: string, extra: Record<string, unknown> = {}) => ({
  machine_name: name,
  hostname: "host-1",
  platform: "linux",
  architecture: "x86_64",
  daemon_version: "1.0.0",
  directories: ["/tmp"],
  ...extra
})

/** Registration sent as raw JSON (the typed client refuses invalid bodies before sending them). */
const rawRegister = (token: string, body: unknown) =>
  rawRequest(HttpClientRequest.post("/api/v1/machines/register").pipe(
    HttpClientRequest.bearerToken(token),
    HttpClientRequest.bodyJsonUnsafe(body)
  ))

const orgWithToken = Effect.gen(function*() {
  const owner = yield* newUser("machines")
  const org = yield* owner.client.organizations.create({ payload: { name: "Machines" } })
  const token = yield* owner.client.machines.createDaemonToken({ params: { orgID: org.id }, payload: { name: "ci" } })
  const daemon = yield* clientWith(token.token)
  return { owner, org, token, daemon }
})

describeApp()("machines", (it) => {
  it.effect("daemon tokens: shown once, listed without the token, org admins only", () =>
    Effect.gen(function*() {
      const { org, owner, token } = yield* orgWithToken
      expect(token.id).toMatch(ID_PATTERN("dtok"))
      expect(token.token).toMatch(/^dtk_/)
      expect(token).toMatchObject({ name: "ci", org_id: org.id, expires_at: null, last_used_at: null })
      const page = yield* owner.client.machines.listDaemonTokens({ params: { orgID: org.id }, query: {} })
      expect(page.data.map((t) => t.id)).toEqual([token.id])
      expect(JSON.stringify(page)).not.toContain(token.token)
      const stranger = yield* newUser("stranger")
      const hidden = yield* expectFailure(stranger.client.machines.listDaemonTokens({ params: { orgID: org.id }, query: {} }))
      expect(hidden._tag).toBe("NotFound")
      const past = yield* expectFailure(
        owner.client.machines.createDaemonToken({ params: { orgID: org.id }, payload: { name: "old", expires_at: new Date(Date.now() - 1000) } })
      )
      expect(past._tag).toBe("InvalidRequest")
    }))

  it.effect("a daemon token's expires_at: RFC 3339 exactly, a day that exists, a year up to 9999", () =>
    Effect.gen(function*() {
      const { org, owner } = yield* orgWithToken
      const create = (expires_at: string) =>
        rawRequest(
          HttpClientRequest.post(`/v1/orgs/${org.id}/daemon-tokens`).pipe(
            HttpClientRequest.bearerToken(owner.token),
            HttpClientRequest.bodyJsonUnsafe({ name: "expiring", expires_at })
          )
        )
      for (
        const refused of [
          "+010000-01-01T00:00:00Z", // past the year 9999 (had been a 500)
          "9999-12-31T23:00:00-05:00", // the year 10000 in UTC
          "2030-02-30T00:00:00Z", // had been March 2nd
          "2030-13-01T00:00:00Z",
          "2030-01-01T24:00:00Z",
          "2030-01-01T23:59:60Z",
          "2030-01-01T00:00:00+25:00",
          "2030-01-01T00:00:00", // no offset: had been the server's local time
          "Tue, 01 Jan 2030 00:00:00 GMT",
          "2030-01-01"
        ]
      ) {
        const answer = yield* create(refused)
        expect([answer.status, answer.json?.code, answer.json?.issues], refused).toEqual([400, "invalid_request", [
          expect.objectContaining({ path: "/expires_at", message: "must be an RFC 3339 date-time, such as 2030-01-01T00:00:00Z" })
        ]])
      }
      const accepted = yield* create("2099-06-01t12:00:00.250+02:00")
      expect(accepted.status).toBe(201)
      expect(accepted.json?.expires_at).toBe("2099-06-01T10:00:00.250Z")
      expect((yield* create("2096-02-29T00:00:00Z")).status).toBe(201)
    }))

  it.effect("register with a daemon token, re-register by machine_id, names unique per owner, metadata limits", () =>
    Effect.gen(function*() {
      const { daemon, org, owner, token } = yield* orgWithToken
      const first = yield* daemon.machineRegistration.register({ payload: facts("builder", { metadata: { team: "a" } }) })
      expect(first.machine.id).toMatch(ID_PATTERN("mch"))
      expect(first.machine).toMatchObject({
        name: "builder",
        status: "offline",
        hostname: "host-1",
        platform: "linux",
        metadata: { team: "a", observed_platform: "linux" }
      })
      expect(first.machine_token.split(".")).toHaveLength(3)
      expect(first.machine_token_expires_in).toBe(900)
      expect(first.machine_ws_path).toBe("/api/v1/machines/ws")

      const again = yield* daemon.machineRegistration.register({
        payload: facts("builder", { machine_id: first.machine.id, platform: "darwin", daemon_version: "1.1.0" })
      })
      expect(again.machine.id).toBe(first.machine.id)
      expect(again.machine).toMatchObject({ platform: "darwin", daemon_version: "1.1.0", metadata: { team: "a", observed_platform: "darwin" } })

      const duplicate = yield* expectFailure(daemon.machineRegistration.register({ payload: facts("builder") }))
      expect(duplicate._tag).toBe("Conflict")

      // metadata.org_id (the daemon's --org) may name the token's organization, and no other.
      const named = yield* daemon.machineRegistration.register({ payload: facts("named", { metadata: { org_id: org.id } }) })
      expect(named.machine.metadata).toMatchObject({ org_id: org.id })
      const elsewhere = yield* newUser("elsewhere")
      const otherOrg = yield* elsewhere.client.organizations.create({ payload: { name: "Elsewhere" } })
      const misnamed = yield* expectFailure(
        daemon.machineRegistration.register({ payload: facts("misnamed", { metadata: { org_id: otherOrg.id } }) })
      )
      expect(misnamed).toMatchObject({
        _tag: "NotFound",
        error: expect.stringContaining(`a daemon token registers machines in its own organization, ${org.id}`)
      })
      // A value that is no organization id is the request's mistake, whoever registers.
      for (const registration of [daemon.machineRegistration, owner.client.machineRegistration]) {
        const malformed = yield* expectFailure(registration.register({ payload: facts("malformed", { metadata: { org_id: "garbage" } }) }))
        expect(malformed).toMatchObject({
          _tag: "InvalidRequest",
          issues: [{ path: "/metadata/org_id", message: "must be an organization id (org_ and 26 characters)" }]
        })
      }
      yield* owner.client.machines.remove({ params: { orgID: org.id, machineID: named.machine.id } })

      const tooMany = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, "v"]))
      for (
        const metadata of [tooMany, { observed_platform: "x" }, { ["k".repeat(65)]: "v" }, { k: "v".repeat(513) }, { k: 1 }]
      ) {
        const refused = yield* rawRegister(token.token, facts("other", { metadata }))
        expect(refused.status).toBe(400)
        expect(refused.json).toMatchObject({ code: "invalid_request" })
      }
      const fifteen = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, "v"]))
      const full = yield* daemon.machineRegistration.register({ payload: facts("other", { metadata: fifteen }) })
      expect(Object.keys(full.machine.metadata)).toHaveLength(16)

      const listed = yield* owner.client.machines.list({ params: { orgID: org.id }, query: {} })
      expect(listed.data.map((m) => m.name).sort()).toEqual(["builder", "other"])
      const updated = yield* owner.client.machines.update({
        params: { orgID: org.id, machineID: first.machine.id },
        payload: { name: "builder-2", metadata: { team: "b" } }
      })
      expect(updated).toMatchObject({ name: "builder-2", metadata: { team: "b", observed_platform: "darwin" } })
    }))

  it.effect("register with a personal API key: the user's machine in their only organization; other tokens refused", () =>
    Effect.gen(function*() {
      const { org, owner } = yield* orgWithToken
      const personal = yield* owner.client.machineRegistration.register({ payload: facts("laptop") })
      const seen = yield* owner.client.machines.get({ params: { orgID: org.id, machineID: personal.machine.id } })
      expect(seen.name).toBe("laptop")
      // Another member does not see it.
      const orgKey = yield* owner.client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "k", role: "admin" } })
      const asOrg = yield* clientWith(orgKey.token)
      const refused = yield* expectFailure(asOrg.machineRegistration.register({ payload: facts("x") }))
      expect(refused._tag).toBe("Forbidden")
      const hidden = yield* expectFailure(asOrg.machines.get({ params: { orgID: org.id, machineID: personal.machine.id } }))
      expect(hidden._tag).toBe("NotFound")
      const bad = yield* clientWith("dtk_not-a-token")
      expect((yield* expectFailure(bad.machineRegistration.register({ payload: facts("x") })))._tag).toBe("Unauthorized")
      // Personal machines are not granted.
      const other = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "P" } })
      const grant = yield* expectFailure(owner.client.machines.createGrant({
        params: { orgID: org.id, machineID: personal.machine.id },
        payload: { target_project_id: other.id }
      }))
      expect(grant).toMatchObject({
        _tag: "InvalidRequest",
        error: `Machine ${personal.machine.id} is a personal machine: it is usable by its owner in every project of the organization and is not granted to projects`
      })
    }))

  it.effect("a personal key of a user in several organizations names one in metadata.org_id; a re-registration keeps the machine's", () =>
    Effect.gen(function*() {
      const { org, owner } = yield* orgWithToken
      const desk = yield* owner.client.machineRegistration.register({ payload: facts("desk") })
      const second = yield* owner.client.organizations.create({ payload: { name: "Second" } })
      const ambiguous = yield* expectFailure(owner.client.machineRegistration.register({ payload: facts("laptop") }))
      expect(ambiguous._tag).toBe("InvalidRequest")
      expect((ambiguous as { error: string }).error).toContain("metadata.org_id (the daemon's --org)")
      // The machine registered while the user had one organization comes back in it, unnamed.
      const again = yield* owner.client.machineRegistration.register({ payload: facts("desk", { machine_id: desk.machine.id }) })
      expect(again.machine.id).toBe(desk.machine.id)
      const named = yield* owner.client.machineRegistration.register({ payload: facts("laptop", { metadata: { org_id: second.id } }) })
      const inSecond = yield* owner.client.machines.list({ params: { orgID: second.id }, query: {} })
      expect(inSecond.data.map((m) => m.id)).toEqual([named.machine.id])
      const inFirst = yield* owner.client.machines.list({ params: { orgID: org.id }, query: {} })
      expect(inFirst.data.map((m) => m.id)).toEqual([desk.machine.id])
      // Another user's machine id names no organization for this one: it must name one.
      const outsider = yield* newUser("outsider")
      const outsiderOrg = yield* outsider.client.organizations.create({ payload: { name: "Outsider" } })
      yield* outsider.client.organizations.create({ payload: { name: "Outsider 2" } })
      const lone = yield* outsider.client.machineRegistration.register({
        payload: facts("lone", { metadata: { org_id: outsiderOrg.id } })
      })
      const foreignId = yield* expectFailure(
        owner.client.machineRegistration.register({ payload: facts("desk-2", { machine_id: lone.machine.id }) })
      )
      expect(foreignId._tag).toBe("InvalidRequest")
      const stranger = yield* orgWithToken
      const foreign = yield* expectFailure(
        owner.client.machineRegistration.register({ payload: facts("laptop-2", { metadata: { org_id: stranger.org.id } }) })
      )
      expect(foreign._tag).toBe("NotFound")
    }))

  it.effect("another organization's machine is not found; unknown ids are not found", () =>
    Effect.gen(function*() {
      const a = yield* orgWithToken
      const b = yield* orgWithToken
      const registered = yield* a.daemon.machineRegistration.register({ payload: facts("a-1") })
      const path = { orgID: b.org.id, machineID: registered.machine.id }
      expect((yield* expectFailure(b.owner.client.machines.get({ params: path })))._tag).toBe("NotFound")
      expect((yield* expectFailure(b.owner.client.machines.remove({ params: path })))._tag).toBe("NotFound")
      expect((yield* expectFailure(b.owner.client.machines.readFile({ params: path, query: { path: "/tmp/x" } })))._tag).toBe("NotFound")
      const crossed = { orgID: a.org.id, machineID: registered.machine.id }
      expect((yield* expectFailure(b.owner.client.machines.get({ params: crossed })))._tag).toBe("NotFound")
      const unknown = yield* newId(MachineId)
      expect((yield* expectFailure(a.owner.client.machines.get({ params: { orgID: a.org.id, machineID: unknown } })))._tag).toBe("NotFound")
      // Re-registering another organization's machine id makes a new machine.
      const fresh = yield* b.daemon.machineRegistration.register({ payload: facts("b-1", { machine_id: registered.machine.id }) })
      expect(fresh.machine.id).not.toBe(registered.machine.id)
    }))

  it.effect.skipIf(usesEmbeddedDatabase)("on Postgres, a machine re-registered while it is deleted: registered as a new machine, as after the delete", () =>
    Effect.gen(function*() {
      const { daemon, org, owner } = yield* orgWithToken
      const registered = yield* daemon.machineRegistration.register({ payload: facts("box") })
      const sql = yield* SqlClient.SqlClient
      const again = yield* sql.withTransaction(Effect.gen(function*() {
        // The machine's row, held until this transaction ends: the delete waits for it, and the
        // registration, which finds the machine, waits behind the delete.
        yield* sql`SELECT id FROM machines WHERE id = ${registered.machine.id} FOR UPDATE`
        const deleting = yield* Effect.forkChild(
          owner.client.machines.remove({ params: { orgID: org.id, machineID: registered.machine.id } })
        )
        yield* waitedOn(sql, "the delete, for the machine")
        const registering = yield* Effect.forkChild(
          daemon.machineRegistration.register({ payload: facts("box", { machine_id: registered.machine.id }) })
        )
        yield* lockWaits(sql, 2, "the registration, for the machine")
        return Fiber.join(deleting).pipe(Effect.andThen(Fiber.join(registering)))
      })).pipe(Effect.orDie, Effect.flatten)
      expect(again.machine.id).not.toBe(registered.machine.id)
      expect(again.machine.name).toBe("box")
      const [listed] = (yield* owner.client.machines.list({ params: { orgID: org.id }, query: {} })).data
      expect(listed.id).toBe(again.machine.id)
    }))

  it.effect("the WebSocket refuses a missing or forged token with 401 before the upgrade", () =>
    Effect.gen(function*() {
      const { daemon, token } = yield* orgWithToken
      const registered = yield* daemon.machineRegistration.register({ payload: facts("ws") })
      const none = yield* rawRequest(HttpClientRequest.get("/api/v1/machines/ws"))
      expect(none.status).toBe(401)
      expect(none.json).toMatchObject({ code: "unauthorized" })
      const forged = registered.machine_token.slice(0, -4) + "AAAA"
      const bad = yield* rawRequest(HttpClientRequest.get("/api/v1/machines/ws").pipe(HttpClientRequest.bearerToken(forged)))
      expect(bad.status).toBe(401)
      const daemonToken = yield* rawRequest(HttpClientRequest.get("/api/v1/machines/ws").pipe(HttpClientRequest.bearerToken(token.token)))
      expect(daemonToken.status).toBe(401)
      const good = yield* rawRequest(HttpClientRequest.get("/api/v1/machines/ws").pipe(HttpClientRequest.bearerToken(registered.machine_token)))
      expect(good.status).toBe(400)
    }))

  it.effect("a real daemon registers, comes online, re-registers the same machine after a restart, stops when its token is revoked", () =>
    Effect.gen(function*() {
      const { org, owner, token } = yield* orgWithToken
      const server = yield* serverUrl
      const dirs = daemonDirs()
      const start = () => startDaemon({ server, token: token.token, name: "real-1", dirs: [dirs.work], state: dirs.state })
      const list = (status?: "online" | "offline" | "idle" | "deleted") =>
        owner.client.machines.list({ params: { orgID: org.id }, query: status === undefined ? {} : { status } }).pipe(
          Effect.map((page) => page.data)
        )
      const first = start()
      const [online] = yield* eventually(list("online"), (machines) => machines.length === 1, "the machine online", "30 seconds")
      expect(online).toMatchObject({ name: "real-1", status: "online", metadata: { observed_platform: process.platform } })
      // Each status filters on exactly the status shown; a daemon's machine is never idle nor deleted.
      expect(yield* list("idle")).toEqual([])
      expect(yield* list("deleted")).toEqual([])
      yield* Effect.promise(() => first.stop())
      yield* eventually(list("offline"), (machines) => machines.length === 1, "the machine offline")
      const second = start()
      yield* eventually(list("online"), (machines) => machines.length === 1, "the machine online again", "30 seconds")
      expect((yield* list()).map((m) => m.id)).toEqual([online.id])
      yield* owner.client.machines.removeDaemonToken({ params: { orgID: org.id, daemonTokenID: token.id } })
      const exit = yield* Effect.promise(() =>
        Promise.race([second.exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 20_000))])
      )
      expect(exit).toMatchObject({ code: 1 })
      expect(second.output()).toContain("401")
    }), { timeout: 90_000 })

  it.effect("a second daemon with a copy of the state file takes the machine; the first stops saying why instead of taking it back", () =>
    Effect.gen(function*() {
      const { org, owner, token } = yield* orgWithToken
      const server = yield* serverUrl
      const original = daemonDirs()
      const copied = daemonDirs()
      const online = owner.client.machines.list({ params: { orgID: org.id }, query: { status: "online" } }).pipe(Effect.map((page) => page.data))
      const first = startDaemon({ server, token: token.token, name: "twin", dirs: [original.work], state: original.state })
      const [machine] = yield* eventually(online, (machines) => machines.length === 1, "the machine online", "30 seconds")
      // A cloned machine: its state file and journal, not the lock file (the clone's daemon is another process).
      copyFileSync(original.state, copied.state)
      copyFileSync(`${original.state}.journal`, `${copied.state}.journal`)
      const second = startDaemon({ server, token: token.token, name: "twin", dirs: [copied.work], state: copied.state })
      const exit = yield* Effect.promise(() =>
        Promise.race([first.exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 30_000))])
      )
      expect(exit).toEqual({ code: 1, signal: null })
      expect(first.output()).toContain(`daemon stopped: another daemon connected as this machine (${machine.id})`)
      // The second keeps the machine: it was never replaced in turn.
      yield* eventually(online, (machines) => machines.length === 1, "the machine online again", "30 seconds")
      expect((yield* owner.client.machines.list({ params: { orgID: org.id }, query: {} })).data.map((m) => m.id)).toEqual([machine.id])
      expect(second.output()).not.toContain("superseded")
      yield* Effect.promise(() => second.stop())
    }), { timeout: 90_000 })

  it.effect("a real daemon on the personal key of a user in two organizations registers into --org's, again after a restart, and anew once its machine is deleted", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("two-orgs")
      const first = yield* owner.client.organizations.create({ payload: { name: "First" } })
      const second = yield* owner.client.organizations.create({ payload: { name: "Second" } })
      const server = yield* serverUrl
      const dirs = daemonDirs()
      const start = () => startDaemon({ server, token: owner.token, name: "laptop", org: second.id, dirs: [dirs.work], state: dirs.state })
      const list = (status: "online" | "offline") =>
        owner.client.machines.list({ params: { orgID: second.id }, query: { status } }).pipe(Effect.map((page) => page.data))
      const daemon = start()
      const [online] = yield* eventually(list("online"), (machines) => machines.length === 1, "the machine online", "30 seconds")
      expect(online).toMatchObject({ name: "laptop", metadata: { org_id: second.id, observed_platform: process.platform } })
      yield* Effect.promise(() => daemon.stop())
      yield* eventually(list("offline"), (machines) => machines.length === 1, "the machine offline")
      const path = { orgID: second.id, machineID: online.id }
      yield* owner.client.machines.update({ params: path, payload: { metadata: { team: "a" } } })
      // Re-registered by its id, naming the organization again: the same machine, its metadata kept.
      const restarted = start()
      const [again] = yield* eventually(list("online"), (machines) => machines.length === 1, "the machine online again", "30 seconds")
      expect(again).toMatchObject({ id: online.id, metadata: { team: "a", observed_platform: process.platform } })
      expect(again.metadata).not.toHaveProperty("org_id")
      expect((yield* owner.client.machines.list({ params: { orgID: first.id }, query: {} })).data).toEqual([])
      // Deleted, its daemon registers at once as a new machine of --org's (the state file's id names none).
      yield* owner.client.machines.remove({ params: path })
      const [renewed] = yield* eventually(
        list("online"),
        (machines) => machines.length === 1 && machines[0].id !== online.id,
        "a new machine online",
        "30 seconds"
      )
      expect(renewed).toMatchObject({ name: "laptop", metadata: { org_id: second.id, observed_platform: process.platform } })
      expect(restarted.output()).not.toContain("daemon stopped")
      // Restarted with the same state file, it is that new machine again.
      yield* Effect.promise(() => restarted.stop())
      yield* eventually(list("offline"), (machines) => machines.length === 1, "the new machine offline")
      const last = start()
      const [back] = yield* eventually(list("online"), (machines) => machines.length === 1, "the new machine online again", "30 seconds")
      expect(back.id).toBe(renewed.id)
      expect((yield* owner.client.machines.list({ params: { orgID: first.id }, query: {} })).data).toEqual([])
      yield* Effect.promise(() => last.stop())
    }), { timeout: 120_000 })
})

/** A raw machine WebSocket: the frames it received, and a way to send. */
const openSocket = (url: string, token: string) =>
  Effect.callback<{ readonly socket: WebSocket; readonly frames: Array<Record<string, unknown>>; readonly closed: Promise<number> }, Error>(
    (resume) => {
      const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } })
      const frames: Array<Record<string, unknown>> = []
      const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)))
      socket.on("message", (data) => frames.push(JSON.parse(String(data))))
      socket.once("open", () => resume(Effect.succeed({ socket, frames, closed })))
      socket.once("error", (error) => resume(Effect.fail(error)))
    }
  )

describeApp()("the machine WebSocket, spoken by hand", (it) => {
  it.effect("hello, welcome, heartbeat, token refresh (the new token opens a socket), an unknown result acknowledged", () =>
    Effect.gen(function*() {
      const { daemon } = yield* orgWithToken
      const registered = yield* daemon.machineRegistration.register({ payload: facts("hand") })
      const url = `${(yield* serverUrl).replace("http", "ws")}${registered.machine_ws_path}`
      const { closed, frames, socket } = yield* openSocket(url, registered.machine_token)
      const hello = {
        type: "hello",
        protocol_version: 1,
        machine_id: registered.machine.id,
        daemon_version: "1.0.0",
        platform: "linux",
        architecture: "x86_64",
        hostname: "h",
        directories: ["/tmp"],
        operations: ["tool", "file.read", "file.write"],
        tools: ["read_file"]
      }
      socket.send(JSON.stringify(hello))
      yield* eventually(Effect.sync(() => frames), (f) => f.some((frame) => frame.type === "welcome"), "the welcome")
      expect(frames[0]).toMatchObject({ type: "welcome", protocol_version: 1, machine_id: registered.machine.id, heartbeat_interval_seconds: 10 })
      socket.send(JSON.stringify({ type: "heartbeat" }))
      socket.send(JSON.stringify({ type: "refresh_token" }))
      socket.send(JSON.stringify({ type: "result", request_id: "nobody-asked.1", outcome: "succeeded", output: {} }))
      yield* eventually(Effect.sync(() => frames), (f) => f.some((frame) => frame.type === "ack"), "the ack")
      expect(frames.map((frame) => frame.type)).toEqual(["welcome", "heartbeat_ack", "token", "ack"])
      expect(frames[3]).toMatchObject({ request_ids: ["nobody-asked.1"] })
      const fresh = frames[2] as { machine_token: string; machine_token_expires_in: number }
      expect(fresh.machine_token_expires_in).toBe(900)
      const second = yield* openSocket(url, fresh.machine_token)
      second.socket.send(JSON.stringify(hello))
      // The second connection of the machine replaces the first.
      expect(yield* Effect.promise(() => closed)).toBe(1000)
      expect(frames[frames.length - 1]).toMatchObject({ type: "close", reason: "superseded" })
      second.socket.close()
    }))

  it.effect("a hello for another machine is a protocol error; a deleted machine's token is refused", () =>
    Effect.gen(function*() {
      const { daemon, org, owner } = yield* orgWithToken
      const registered = yield* daemon.machineRegistration.register({ payload: facts("hand-2") })
      const other = yield* daemon.machineRegistration.register({ payload: facts("hand-3") })
      const url = `${(yield* serverUrl).replace("http", "ws")}${registered.machine_ws_path}`
      const { closed, frames, socket } = yield* openSocket(url, registered.machine_token)
      socket.send(JSON.stringify({
        type: "hello",
        protocol_version: 1,
        machine_id: other.machine.id,
        daemon_version: "1.0.0",
        platform: "linux",
        architecture: "x86_64",
        hostname: "h",
        directories: [],
        operations: [],
        tools: []
      }))
      expect(yield* Effect.promise(() => closed)).toBe(1002)
      expect(frames).toEqual([{ type: "close", reason: "protocol_error", message: expect.stringContaining(other.machine.id) }])
      yield* owner.client.machines.remove({ params: { orgID: org.id, machineID: registered.machine.id } })
      const refused = yield* rawRequest(HttpClientRequest.get("/api/v1/machines/ws").pipe(HttpClientRequest.bearerToken(registered.machine_token)))
      expect(refused.status).toBe(401)
      expect(String(refused.json?.error)).toContain("deleted")
    }))
})
