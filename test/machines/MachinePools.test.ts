import { expect } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { rmSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { MachinePoolId } from "../../src/domain/shared/Ids.ts"
import { installClusterPools } from "../support/ClusterPoolsFile.ts"
import { dockerPoolBody } from "../support/DockerPools.ts"
import {
  describeApp,
  expectFailure,
  ID_PATTERN,
  joinOrganization,
  newId,
  newUser,
  sendAs
} from "../support/TestApp.ts"

const LOCAL_KEY = "local-provider-key-" + randomBytes(8).toString("hex")

const setUp = (label = "Pools") =>
  Effect.gen(function*() {
    const owner = yield* newUser("owner")
    const org = yield* owner.client.organizations.create({ payload: { name: label } })
    const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
    const secret = (name: string, value = "{}") =>
      owner.client.secrets.create({ params: { orgID: org.id }, payload: { name, value: Redacted.make(value) } })
    const auth = yield* secret("docker-auth")
    const dockerBody = dockerPoolBody(auth.id)
    return { owner, org, project, auth, secret, dockerBody }
  })

type Body = Record<string, unknown>
const without = (body: Body, ...keys: Array<string>) =>
  Object.fromEntries(Object.entries(body).filter(([key]) => !keys.includes(key)))

/** The issues' paths of a 400 answer. */
const issuePaths = (response: { status: number; json?: Record<string, unknown> }) => {
  expect(response.status).toBe(400)
  expect(response.json?.code).toBe("invalid_request")
  return ((response.json?.issues ?? []) as Array<{ path: string }>).map((issue) => issue.path).sort()
}

// A protocol double of the Docker Engine API served over real HTTP: /_ping, /version and
// /images/{name}/json, each answer chosen by the test.
interface DockerDouble {
  ping: number
  version: string
  images: ReadonlySet<string>
  readonly requests: Array<string>
}
const dockerHandler = (double: DockerDouble) => (request: IncomingMessage, response: ServerResponse) => {
  const url = request.url ?? ""
  double.requests.push(`${request.method} ${url}`)
  const json = (status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" })
    response.end(JSON.stringify(body))
  }
  if (request.method !== "GET") return json(405, { message: "read-only double" })
  if (url === "/_ping") {
    response.writeHead(double.ping, { "content-type": "text/plain" })
    return response.end(double.ping === 200 ? "OK" : "down for maintenance")
  }
  if (url === "/version") {
    response.writeHead(200, { "content-type": "application/json" })
    return response.end(double.version)
  }
  const image = /^\/images\/(.+)\/json$/.exec(url)
  if (image !== null) {
    const name = decodeURIComponent(image[1])
    return double.images.has(name)
      ? json(200, { Id: "sha256:" + "ab".repeat(32), RepoTags: [name] })
      : json(404, { message: `No such image: ${name}` })
  }
  return json(404, { message: "page not found" })
}
const GOOD_VERSION = JSON.stringify({ Version: "27.1.0", ApiVersion: "1.46", Os: "linux" })

/** A Docker double listening on `where` (a loopback port, or a unix socket path), closed with the scope. */
const dockerDouble = (where: { port: 0 } | { socket: string }) =>
  Effect.acquireRelease(
    Effect.callback<{ double: DockerDouble; server: Server; host: string }>((resume) => {
      const double: DockerDouble = { ping: 200, version: GOOD_VERSION, images: new Set(["node:22"]), requests: [] }
      const server = createServer(dockerHandler(double))
      const ready = () => {
        const host = "socket" in where
          ? `unix://${where.socket}`
          : `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`
        resume(Effect.succeed({ double, server, host }))
      }
      if ("socket" in where) server.listen(where.socket, ready)
      else server.listen(0, "127.0.0.1", ready)
    }),
    ({ server }) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  )

describeApp({ localProviderKey: Option.some(Redacted.make(LOCAL_KEY)) })("machine pools", (it) => {
  it.effect("create: 201, the same body again 200 (same pool), another body for the name 409", () =>
    Effect.gen(function*() {
      const { dockerBody, org, owner } = yield* setUp()
      const created = yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/machine-pools`, dockerBody)
      expect(created.status).toBe(201)
      const pool = created.json!
      expect(pool.id).toMatch(ID_PATTERN("mpo"))
      expect(pool).toMatchObject({
        org_id: org.id,
        name: "builders",
        management_kind: "tenant",
        provider: "docker",
        description: null,
        provider_config: {},
        default_machine_env: {},
        default_machine_secret_env: {},
        default_cwd: null,
        runtime_protection_enabled: false,
        min_machine_cpu: null,
        delete_after_idle_minutes: null,
        metadata: {}
      })
      expect(pool.usage).toBeUndefined()

      const again = yield* sendAs(owner, "POST", `/api/v1/orgs/${org.id}/machine-pools`, dockerBody)
      expect(again.status).toBe(200)
      expect(again.json!.id).toBe(pool.id)

      const other = yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/machine-pools`, { ...dockerBody, max_total_machines: 5 })
      expect(other.status).toBe(409)
      expect(other.json!.code).toBe("conflict")
      expect(other.json!.error).toContain("builders")

      const got = yield* owner.client.machinePools.get({ params: { orgID: org.id, poolID: pool.id as MachinePoolId } })
      expect(got.usage).toEqual({ machines: 0, cpu: 0, memory_mb: 0 })
      expect(got.max_total_cpu).toBe(8)
      const listed = yield* owner.client.machinePools.list({ params: { orgID: org.id }, query: {} })
      expect(listed.data.map((p) => [p.id, p.usage])).toEqual([[pool.id, { machines: 0, cpu: 0, memory_mb: 0 }]])
    }))

  it.effect("docker requires the CPU and memory sizes and an image; refuses unknown provider fields", () =>
    Effect.gen(function*() {
      const { dockerBody, org, owner } = yield* setUp()
      const path = `/v1/orgs/${org.id}/machine-pools`
      const missing = yield* sendAs(
        owner,
        "POST",
        path,
        without(dockerBody, "default_machine_cpu", "default_machine_memory_mb", "max_total_cpu", "max_total_memory_mb")
      )
      expect(issuePaths(missing)).toEqual(
        ["/default_machine_cpu", "/default_machine_memory_mb", "/max_total_cpu", "/max_total_memory_mb"]
      )
      expect(JSON.stringify(missing.json!.issues)).toContain("is required for docker pools")

      const badObjects = yield* sendAs(owner, "POST", path, {
        ...dockerBody,
        provider_config: { host: "http://docker:2375", tls: true },
        default_machine_provider_options: { image: "" }
      })
      expect(issuePaths(badObjects)).toEqual(
        ["/default_machine_provider_options/image", "/provider_config/host", "/provider_config/tls"]
      )
      const noImage = yield* sendAs(owner, "POST", path, { ...dockerBody, default_machine_provider_options: {} })
      expect(issuePaths(noImage)).toEqual(["/default_machine_provider_options/image"])

      const unknownProvider = yield* sendAs(owner, "POST", path, { ...dockerBody, provider: "kubernetes" })
      expect(issuePaths(unknownProvider)).toEqual(["/provider"])
      const missingRequired = yield* sendAs(owner, "POST", path, without(dockerBody, "max_total_machines", "provider_auth_secret_id"))
      expect(issuePaths(missingRequired)).toEqual(["/max_total_machines", "/provider_auth_secret_id"])

      for (const host of ["unix:///var/run/docker.sock", "/run/user/1000/docker.sock", "tcp://10.0.0.5:2375"]) {
        const ok = yield* sendAs(owner, "POST", path, { ...dockerBody, name: `h${host.length}`, provider_config: { host } })
        expect(ok.status).toBe(201)
      }
    }))

  it.effect("local refuses the CPU fields and needs the operator's key in its auth secret", () =>
    Effect.gen(function*() {
      const { org, owner, secret } = yield* setUp()
      const keySecret = yield* secret("local-key", LOCAL_KEY)
      const wrongSecret = yield* secret("not-the-key", "guess")
      const path = `/v1/orgs/${org.id}/machine-pools`
      const localBody = {
        name: "on-host",
        provider: "local",
        provider_auth_secret_id: keySecret.id,
        default_machine_provider_options: {},
        max_total_machines: 2
      }
      const withCpu = yield* sendAs(owner, "POST", path, {
        ...localBody,
        default_machine_cpu: 1,
        max_total_cpu: 2,
        min_machine_cpu: 1,
        max_machine_cpu: 2
      })
      expect(issuePaths(withCpu)).toEqual(["/default_machine_cpu", "/max_machine_cpu", "/max_total_cpu", "/min_machine_cpu"])
      expect(JSON.stringify(withCpu.json!.issues)).toContain("cannot enforce CPU limits")

      const wrongKey = yield* sendAs(owner, "POST", path, { ...localBody, provider_auth_secret_id: wrongSecret.id })
      expect(issuePaths(wrongKey)).toEqual(["/provider_auth_secret_id"])
      expect(JSON.stringify(wrongKey.json)).not.toContain("guess")
      expect(JSON.stringify(wrongKey.json)).not.toContain(LOCAL_KEY)

      const providerFields = yield* sendAs(owner, "POST", path, { ...localBody, provider_config: { host: "/x" } })
      expect(issuePaths(providerFields)).toEqual(["/provider_config/host"])

      const created = yield* sendAs(owner, "POST", path, { ...localBody, default_machine_memory_mb: 512, max_total_memory_mb: 1024 })
      expect(created.status).toBe(201)
      expect(created.json).toMatchObject({ provider: "local", default_machine_cpu: null, default_machine_memory_mb: 512 })
    }))

  it.effect("bounds: sizes positive, min ≤ default ≤ max ≤ total, idle minutes from 5, metadata limits", () =>
    Effect.gen(function*() {
      const { dockerBody, org, owner } = yield* setUp()
      const path = `/v1/orgs/${org.id}/machine-pools`
      const zero = yield* sendAs(owner, "POST", path, { ...dockerBody, max_total_machines: 0, default_machine_cpu: 2_147_483_648 })
      expect(issuePaths(zero)).toEqual(["/default_machine_cpu", "/max_total_machines"])

      const inconsistent = yield* sendAs(owner, "POST", path, {
        ...dockerBody,
        min_machine_cpu: 4,
        max_machine_cpu: 3,
        default_machine_memory_mb: 9000,
        max_machine_memory_mb: 16384
      })
      expect(issuePaths(inconsistent)).toEqual([
        "/default_machine_cpu",
        "/default_machine_memory_mb",
        "/max_machine_memory_mb",
        "/min_machine_cpu"
      ])

      const idle = yield* sendAs(owner, "POST", path, { ...dockerBody, delete_after_idle_minutes: 4 })
      expect(issuePaths(idle)).toEqual(["/delete_after_idle_minutes"])

      const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, "v"]))
      const tooMany = yield* sendAs(owner, "POST", path, { ...dockerBody, metadata: sixteen })
      expect(issuePaths(tooMany)).toEqual(["/metadata"])
      const reserved = yield* sendAs(owner, "POST", path, { ...dockerBody, metadata: { observed_platform: "linux" } })
      expect(issuePaths(reserved)).toEqual(["/metadata"])
      const longKey = yield* sendAs(owner, "POST", path, { ...dockerBody, metadata: { ["k".repeat(65)]: "v" } })
      expect(issuePaths(longKey)).toEqual(["/metadata"])
      const longValue = yield* sendAs(owner, "POST", path, { ...dockerBody, metadata: { team: "v".repeat(513) } })
      expect(issuePaths(longValue)).toEqual(["/metadata/team"])
      const badEnv = yield* sendAs(owner, "POST", path, { ...dockerBody, default_machine_env: { "1BAD": "x" } })
      expect(issuePaths(badEnv)).toEqual(["/default_machine_env"])

      // Characters, not UTF-16 units: 64 emoji make a key of 64 characters, 512 a value of 512.
      const emojiLongKey = yield* sendAs(owner, "POST", path, { ...dockerBody, metadata: { ["😀".repeat(65)]: "v" } })
      expect(issuePaths(emojiLongKey)).toEqual(["/metadata"])
      const emojiLongValue = yield* sendAs(owner, "POST", path, { ...dockerBody, metadata: { team: "😀".repeat(513) } })
      expect(issuePaths(emojiLongValue)).toEqual(["/metadata/team"])
      const fifteen = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, "v".repeat(512)]))
      fifteen.k0 = "😀".repeat(512)
      fifteen["😀".repeat(64)] = fifteen.k14
      delete fifteen.k14
      const full = yield* sendAs(owner, "POST", path, {
        ...dockerBody,
        metadata: fifteen,
        delete_after_idle_minutes: 5,
        min_machine_cpu: 1,
        max_machine_cpu: 4,
        default_machine_env: { MODE: "ci" },
        default_cwd: "/work",
        runtime_protection_enabled: true,
        description: "CI builders"
      })
      expect(full.status).toBe(201)
      expect(full.json).toMatchObject({
        metadata: fifteen,
        delete_after_idle_minutes: 5,
        default_machine_env: { MODE: "ci" },
        default_cwd: "/work",
        runtime_protection_enabled: true,
        description: "CI builders"
      })
    }))

  it.effect("secrets: the auth secret and the secret environment must be organization secrets of this organization", () =>
    Effect.gen(function*() {
      const { dockerBody, org, owner, secret } = yield* setUp()
      const stranger = yield* setUp("Elsewhere")
      const personal = yield* owner.client.secrets.create({
        params: { orgID: org.id },
        payload: { name: "mine", value: Redacted.make("x"), owner: "personal" }
      })
      const path = `/v1/orgs/${org.id}/machine-pools`
      const foreign = yield* sendAs(owner, "POST", path, { ...dockerBody, provider_auth_secret_id: stranger.auth.id })
      expect(issuePaths(foreign)).toEqual(["/provider_auth_secret_id"])
      const personalAuth = yield* sendAs(owner, "POST", path, { ...dockerBody, provider_auth_secret_id: personal.id })
      expect(issuePaths(personalAuth)).toEqual(["/provider_auth_secret_id"])
      const badEnv = yield* sendAs(owner, "POST", path, {
        ...dockerBody,
        default_machine_secret_env: { GITHUB_TOKEN: stranger.auth.id }
      })
      expect(issuePaths(badEnv)).toEqual(["/default_machine_secret_env/GITHUB_TOKEN"])

      // A secret a pool holds cannot be deleted.
      const token = yield* secret("github")
      const pool = yield* sendAs(owner, "POST", path, { ...dockerBody, default_machine_secret_env: { GITHUB_TOKEN: token.id } })
      expect(pool.status).toBe(201)
      for (const held of [token.id, dockerBody.provider_auth_secret_id]) {
        const refused = yield* sendAs(owner, "DELETE", `/v1/orgs/${org.id}/secrets/${held}`)
        expect(refused.status).toBe(409)
        expect(refused.json!.error).toContain(`machine pool "builders"`)
      }
    }))

  it.effect("a secret environment of 20,000 entries is checked as a whole: the same secret accepted, a foreign one 10 issues listed", () =>
    Effect.gen(function*() {
      const { dockerBody, org, owner, secret } = yield* setUp()
      const stranger = yield* setUp("Elsewhere")
      const path = `/v1/orgs/${org.id}/machine-pools`
      const token = yield* secret("github")
      const env = (secretId: string) => Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`E${i}`, secretId]))
      const foreign = yield* sendAs(owner, "POST", path, { ...dockerBody, default_machine_secret_env: env(stranger.auth.id) })
      expect(foreign.status).toBe(400)
      expect(foreign.json!.issues).toHaveLength(10)
      expect((foreign.json!.issues as Array<unknown>)[0]).toEqual({
        path: "/default_machine_secret_env/E0",
        message: "must be the id of an organization secret of this organization"
      })
      expect(foreign.json!.error).toMatch(/ \(and 19990 more\)$/)
      const pool = yield* sendAs(owner, "POST", path, { ...dockerBody, default_machine_secret_env: env(token.id) })
      expect(pool.status).toBe(201)
      expect(Object.keys(pool.json!.default_machine_secret_env as object)).toHaveLength(20_000)
    }), { timeout: 60_000 })

  it.effect("PATCH changes tenant-editable settings, checked again against the provider; DELETE 204", () =>
    Effect.gen(function*() {
      const { dockerBody, org, owner } = yield* setUp()
      const pool = yield* owner.client.machinePools.create({ params: { orgID: org.id }, payload: dockerBody as never })
      yield* owner.client.machinePools.create({ params: { orgID: org.id }, payload: { ...dockerBody, name: "taken" } as never })
      const at = `/v1/orgs/${org.id}/machine-pools/${pool.id}`
      const patched = yield* sendAs(owner, "PATCH", at, {
        description: "bigger",
        max_total_machines: 10,
        delete_after_idle_minutes: 30,
        metadata: { team: "ci" }
      })
      expect(patched.status).toBe(200)
      expect(patched.json).toMatchObject({ description: "bigger", max_total_machines: 10, delete_after_idle_minutes: 30, metadata: { team: "ci" } })
      expect(Date.parse(patched.json!.updated_at as string)).toBeGreaterThanOrEqual(Date.parse(pool.updated_at.toISOString()))

      const cleared = yield* sendAs(owner, "PATCH", at, { description: null, delete_after_idle_minutes: null })
      expect(cleared.json).toMatchObject({ description: null, delete_after_idle_minutes: null })
      expect(issuePaths(yield* sendAs(owner, "PATCH", at, { default_machine_cpu: null }))).toEqual(["/default_machine_cpu"])
      expect(issuePaths(yield* sendAs(owner, "PATCH", at, { default_machine_cpu: 16 }))).toEqual(["/default_machine_cpu"])
      expect(issuePaths(yield* sendAs(owner, "PATCH", at, { provider: "local" }))).toEqual(["/provider"])
      const clash = yield* sendAs(owner, "PATCH", at, { name: "taken" })
      expect(clash.status).toBe(409)

      const removed = yield* sendAs(owner, "DELETE", at)
      expect(removed.status).toBe(204)
      const gone = yield* sendAs(owner, "GET", at)
      expect(gone.status).toBe(404)
      expect(gone.json!.code).toBe("not_found")
      expect((yield* sendAs(owner, "DELETE", at)).status).toBe(404)
    }))

  it.effect("members read pools, admins manage them; another organization sees 404", () =>
    Effect.gen(function*() {
      const { dockerBody, org, owner, project } = yield* setUp()
      const member = yield* newUser("member")
      yield* joinOrganization(owner, org.id, member, "member")
      const pool = yield* owner.client.machinePools.create({ params: { orgID: org.id }, payload: dockerBody as never })
      const poolPath = { orgID: org.id, poolID: pool.id }

      expect((yield* member.client.machinePools.get({ params: poolPath })).id).toBe(pool.id)
      expect((yield* member.client.machinePools.list({ params: { orgID: org.id }, query: {} })).data).toHaveLength(1)
      const attempts: Array<Effect.Effect<unknown, { readonly _tag: string }>> = [
          member.client.machinePools.create({ params: { orgID: org.id }, payload: { ...dockerBody, name: "m" } as never }),
          member.client.machinePools.update({ params: poolPath, payload: { description: "x" } }),
          member.client.machinePools.remove({ params: poolPath }),
          member.client.machinePools.createGrant({ params: poolPath, payload: { target_project_id: project.id } })
        ]
      for (const attempt of attempts) {
        expect((yield* expectFailure(attempt))._tag).toBe("Forbidden")
      }

      const outsider = yield* newUser("outsider")
      const elsewhere = yield* outsider.client.organizations.create({ payload: { name: "Other" } })
      expect((yield* expectFailure(outsider.client.machinePools.get({ params: poolPath })))._tag).toBe("NotFound")
      expect((yield* expectFailure(outsider.client.machinePools.list({ params: { orgID: org.id }, query: {} })))._tag)
        .toBe("NotFound")
      // The pool's id under the outsider's own organization is not found either.
      expect(
        (yield* expectFailure(outsider.client.machinePools.get({ params: { orgID: elsewhere.id, poolID: pool.id } })))._tag
      ).toBe("NotFound")
      expect(
        (yield* expectFailure(outsider.client.machinePools.remove({ params: { orgID: elsewhere.id, poolID: pool.id } })))._tag
      ).toBe("NotFound")
      const unknown = yield* newId(MachinePoolId)
      expect((yield* expectFailure(owner.client.machinePools.get({ params: { orgID: org.id, poolID: unknown } })))._tag)
        .toBe("NotFound")
    }))

  it.effect("grants: to a project of the organization, listed, revoked", () =>
    Effect.gen(function*() {
      const { dockerBody, org, owner, project } = yield* setUp()
      const member = yield* newUser("member")
      yield* joinOrganization(owner, org.id, member, "member")
      const stranger = yield* setUp("Elsewhere")
      const pool = yield* owner.client.machinePools.create({ params: { orgID: org.id }, payload: dockerBody as never })
      const poolPath = { orgID: org.id, poolID: pool.id }

      const grant = yield* owner.client.machinePools.createGrant({ params: poolPath, payload: { target_project_id: project.id } })
      expect(grant.id).toMatch(ID_PATTERN("mpogrant"))
      expect(grant).toMatchObject({ org_id: org.id, machine_pool_id: pool.id, target_project_id: project.id })
      const twice = yield* expectFailure(
        owner.client.machinePools.createGrant({ params: poolPath, payload: { target_project_id: project.id } })
      )
      expect(twice._tag).toBe("Conflict")
      const foreignProject = yield* expectFailure(
        owner.client.machinePools.createGrant({ params: poolPath, payload: { target_project_id: stranger.project.id } })
      )
      expect(foreignProject._tag).toBe("InvalidRequest")

      const listed = yield* member.client.machinePools.listGrants({ params: poolPath, query: {} })
      expect(listed.data.map((g) => g.id)).toEqual([grant.id])
      yield* owner.client.machinePools.removeGrant({ params: { ...poolPath, grantID: grant.id } })
      expect((yield* owner.client.machinePools.listGrants({ params: poolPath, query: {} })).data).toEqual([])
      const again = yield* expectFailure(owner.client.machinePools.removeGrant({ params: { ...poolPath, grantID: grant.id } }))
      expect(again._tag).toBe("NotFound")
    }))

  it.effect("check-connection, local: the operator's key accepted (bwrap reported), another value 422", () =>
    Effect.gen(function*() {
      const { org, owner, secret } = yield* setUp()
      const keySecret = yield* secret("local-key", LOCAL_KEY)
      const wrongSecret = yield* secret("not-the-key", "guess")
      const path = `/v1/orgs/${org.id}/machine-pools/check-connection`
      const ok = yield* sendAs(owner, "POST", path, { provider: "local", provider_auth_secret_id: keySecret.id })
      expect(ok.status).toBe(200)
      expect(ok.json).toMatchObject({ ok: true, provider: "local" })
      expect(ok.json!.details).toMatch(/bwrap/)
      expect(ok.json!.details).not.toContain(LOCAL_KEY)

      const refused = yield* sendAs(owner, "POST", path, { provider: "local", provider_auth_secret_id: wrongSecret.id })
      expect(refused.status).toBe(422)
      expect(refused.json).toMatchObject({ code: "unprocessable" })
      expect(refused.json!.details).toContain("AGENT_PLATFORM_LOCAL_PROVIDER_KEY")
      expect(JSON.stringify(refused.json)).not.toContain("guess")

      const personal = yield* owner.client.secrets.create({
        params: { orgID: org.id },
        payload: { name: "mine", value: Redacted.make(LOCAL_KEY), owner: "personal" }
      })
      const notOrg = yield* sendAs(owner, "POST", path, { provider: "local", provider_auth_secret_id: personal.id })
      expect(issuePaths(notOrg)).toEqual(["/provider_auth_secret_id"])
      const member = yield* newUser("member")
      yield* joinOrganization(owner, org.id, member, "member")
      const byMember = yield* expectFailure(
        member.client.machinePools.checkConnection({
          params: { orgID: org.id },
          payload: { provider: "local", provider_auth_secret_id: keySecret.id }
        })
      )
      expect(byMember._tag).toBe("Forbidden")
    }))

  it.effect("check-connection, docker: ping, version and the image, over tcp and a unix socket; each failure 422", () =>
    Effect.gen(function*() {
      const { auth, org, owner } = yield* setUp()
      const check = (provider_config: Body, image = "node:22") =>
        sendAs(owner, "POST", `/v1/orgs/${org.id}/machine-pools/check-connection`, {
          provider: "docker",
          provider_auth_secret_id: auth.id,
          provider_config,
          default_machine_provider_options: { image }
        })
      const tcp = yield* dockerDouble({ port: 0 })
      const ok = yield* check({ host: tcp.host })
      expect(ok.status).toBe(200)
      expect(ok.json).toMatchObject({ ok: true, provider: "docker" })
      expect(ok.json!.details).toContain("Docker 27.1.0 (API 1.46)")
      expect(ok.json!.details).toContain("image node:22 is present")
      expect(tcp.double.requests).toEqual(["GET /_ping", "GET /version", "GET /images/node%3A22/json"])

      const noImage = yield* check({ host: tcp.host }, "python:3.12")
      expect(noImage.status).toBe(422)
      expect(noImage.json!.code).toBe("unprocessable")
      expect(noImage.json!.details).toContain("does not have the image python:3.12")

      tcp.double.version = "<html>not docker</html>"
      const notDocker = yield* check({ host: tcp.host })
      expect(notDocker.status).toBe(422)
      expect(notDocker.json!.details).toContain("is it a Docker Engine?")

      tcp.double.ping = 503
      const down = yield* check({ host: tcp.host })
      expect(down.status).toBe(422)
      expect(down.json!.details).toContain("answered /_ping with 503")

      const socket = join(tmpdir(), `pools-docker-${randomBytes(4).toString("hex")}.sock`)
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(socket, { force: true })))
      const unix = yield* dockerDouble({ socket })
      const overSocket = yield* check({ host: unix.host })
      expect(overSocket.status).toBe(200)
      expect(unix.double.requests).toHaveLength(3)

      const missingSocket = yield* check({ host: `unix://${socket}.absent` })
      expect(missingSocket.status).toBe(422)
      expect(missingSocket.json!.details).toContain("Cannot reach the Docker Engine")
      const closedPort = yield* check({ host: "tcp://127.0.0.1:1" })
      expect(closedPort.status).toBe(422)
      expect(closedPort.json!.details).toContain("Cannot reach the Docker Engine")

      const badRequest = yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/machine-pools/check-connection`, {
        provider: "docker",
        provider_auth_secret_id: auth.id,
        provider_config: { host: "ftp://x" }
      })
      expect(issuePaths(badRequest)).toEqual(["/default_machine_provider_options/image", "/provider_config/host"])
    }))
})

describeApp()("machine pools: a Docker host that never answers", (it) => {
  it.effect("check-connection gives up after 5 seconds with 422", () =>
    Effect.gen(function*() {
      const { auth, org, owner } = yield* setUp()
      // Accepts connections and reads requests, never answers.
      const silent = yield* Effect.acquireRelease(
        Effect.callback<{ server: Server; port: number }>((resume) => {
          const server = createServer(() => {})
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, port: (server.address() as AddressInfo).port })))
        }),
        ({ server }) => Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
      )
      const started = Date.now()
      const hung = yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/machine-pools/check-connection`, {
        provider: "docker",
        provider_auth_secret_id: auth.id,
        provider_config: { host: `tcp://127.0.0.1:${silent.port}` },
        default_machine_provider_options: { image: "node:22" }
      })
      expect(hung.status).toBe(422)
      expect(hung.json!.details).toContain("did not answer GET /_ping within 5 seconds")
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_900)
    }))
})

describeApp()("cluster machine pools (AGENT_PLATFORM_CLUSTER_POOLS_FILE)", (it) => {
  it.effect("installed at start-up as management_kind cluster, refusing tenant PATCH and DELETE; the file is the truth", () =>
    Effect.gen(function*() {
      const { dockerBody, org, owner, project } = yield* setUp()
      const declared = (name: string, extra: Body = {}) => ({ ...dockerBody, org_id: org.id, name, ...extra })
      yield* installClusterPools([declared("shared-a"), declared("shared-b")])
      const listed = yield* owner.client.machinePools.list({ params: { orgID: org.id }, query: {} })
      expect(listed.data.map((p) => [p.name, p.management_kind])).toEqual([["shared-a", "cluster"], ["shared-b", "cluster"]])
      const a = listed.data[0]
      const at = `/v1/orgs/${org.id}/machine-pools/${a.id}`

      const patch = yield* sendAs(owner, "PATCH", at, { description: "mine now" })
      expect(patch.status).toBe(403)
      expect(patch.json!.code).toBe("forbidden")
      expect(patch.json!.error).toContain("managed by the server's operator")
      expect((yield* sendAs(owner, "DELETE", at)).status).toBe(403)
      // The same body from a tenant does not take over the operator's pool.
      const { org_id: _, ...body } = declared("shared-a")
      expect((yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/machine-pools`, body)).status).toBe(409)
      // Granting stays with the organization's admins.
      const grant = yield* owner.client.machinePools.createGrant({
        params: { orgID: org.id, poolID: a.id },
        payload: { target_project_id: project.id }
      })
      expect(grant.machine_pool_id).toBe(a.id)

      // A tenant pool takes a name the operator declares next: it is skipped, not replaced.
      yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/machine-pools`, { ...dockerBody, name: "shared-c" })
      // Restart with a changed file: a changed, a dropped and a tenant-named pool.
      yield* installClusterPools([declared("shared-a", { max_total_machines: 9 }), declared("shared-c")])
      const after = yield* owner.client.machinePools.list({ params: { orgID: org.id }, query: {} })
      expect(after.data.map((p) => [p.name, p.management_kind, p.max_total_machines])).toEqual([
        ["shared-a", "cluster", 9],
        ["shared-c", "tenant", 4]
      ])
      expect(after.data[0].id).toBe(a.id)
      expect((yield* owner.client.machinePools.listGrants({ params: { orgID: org.id, poolID: a.id }, query: {} })).data)
        .toHaveLength(1)
    }))

  it.effect("a file that is not valid stops the start-up, naming the problem", () =>
    Effect.gen(function*() {
      const { dockerBody, org, owner } = yield* setUp()
      const missingCpu = yield* Effect.flip(
        installClusterPools([{ ...dockerBody, org_id: org.id, name: "x", default_machine_cpu: undefined }])
      )
      expect(missingCpu._tag).toBe("ClusterPoolsRefused")
      expect(missingCpu.message).toContain("pools[0]")
      expect(missingCpu.message).toContain("/default_machine_cpu is required for docker pools")
      const twice = yield* Effect.flip(
        installClusterPools([{ ...dockerBody, org_id: org.id, name: "x" }, { ...dockerBody, org_id: org.id, name: "x" }])
      )
      expect(twice.message).toContain("declared twice")
      const notJson = yield* Effect.flip(installClusterPools([], { raw: "{ pools: oops" }))
      expect(notJson.message).toContain("is not a valid cluster pools file")
      const unknownField = yield* Effect.flip(installClusterPools([{ ...dockerBody, org_id: org.id, name: "y", colour: "red" }]))
      expect(unknownField.message).toContain("is not a valid cluster pools file")
      // Nothing of a refused file was installed.
      expect((yield* owner.client.machinePools.list({ params: { orgID: org.id }, query: {} })).data).toEqual([])
    }))
})

describeApp({ blockPrivateNetworks: true })("machine pools where private network targets are refused", (it) => {
  it.effect("a docker host must be tcp:// and not a private address, for pools and for check-connection", () =>
    Effect.gen(function*() {
      const { auth, dockerBody, org, owner } = yield* setUp()
      const path = `/v1/orgs/${org.id}/machine-pools`
      for (const provider_config of [{}, { host: "unix:///var/run/docker.sock" }, { host: "tcp://127.0.0.1:2375" }, { host: "tcp://10.1.2.3:2375" }]) {
        const refused = yield* sendAs(owner, "POST", path, { ...dockerBody, provider_config })
        expect(issuePaths(refused)).toEqual(["/provider_config/host"])
      }
      const publicHost = yield* sendAs(owner, "POST", path, { ...dockerBody, provider_config: { host: "tcp://docker.example.test:2376" } })
      expect(publicHost.status).toBe(201)
      const check = yield* sendAs(owner, "POST", `${path}/check-connection`, {
        provider: "docker",
        provider_auth_secret_id: auth.id,
        provider_config: { host: "tcp://127.0.0.1:2375" },
        default_machine_provider_options: { image: "node:22" }
      })
      expect(issuePaths(check)).toEqual(["/provider_config/host"])
    }))
})

describeApp()("machine pools without the local provider key", (it) => {
  it.effect("local pools are refused and check-connection says why", () =>
    Effect.gen(function*() {
      const { org, owner, secret } = yield* setUp()
      const anything = yield* secret("local-key", LOCAL_KEY)
      const created = yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/machine-pools`, {
        name: "on-host",
        provider: "local",
        provider_auth_secret_id: anything.id,
        default_machine_provider_options: {},
        max_total_machines: 1
      })
      expect(issuePaths(created)).toEqual(["/provider"])
      expect(JSON.stringify(created.json!.issues)).toContain("AGENT_PLATFORM_LOCAL_PROVIDER_KEY")
      const checked = yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/machine-pools/check-connection`, {
        provider: "local",
        provider_auth_secret_id: anything.id
      })
      expect(checked.status).toBe(422)
      expect(checked.json!.details).toContain("disabled on this server")
    }))
})
