import { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SecretKey } from "../../src/layers/SecretKey.ts"
import { Secrets } from "../../src/services/configuration/Secrets.ts"
import {
  clientWith,
  describeApp,
  expectFailure,
  ID_PATTERN,
  joinOrganization,
  newUser,
  sendAs,
  testConfig
} from "../support/TestApp.ts"

const sealedValueOf = (secretId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ value_sealed: string }>`SELECT value_sealed FROM secrets WHERE id = ${secretId}`).pipe(
    Effect.map((rows) => rows[0]?.value_sealed),
    Effect.orDie
  )

const revealed = (secretId: string) =>
  Effect.flatMap(Secrets, (secrets) => secrets.reveal(secretId as never)).pipe(Effect.map(Redacted.value))

describeApp()("secrets", (it) => {
  it.effect("lifecycle: create, get, list, rotate, delete; the value never comes back", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Vault" } })
      const value = "sk-live-" + "x".repeat(20) + "-TOP-SECRET"

      const created = yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/secrets`, {
        name: "OPENAI_API_KEY",
        value,
        description: "the provider key"
      })
      expect(created.status).toBe(201)
      expect(created.text).not.toContain(value)
      expect(Object.keys(created.json!).sort()).toEqual(
        ["created_at", "description", "id", "name", "org_id", "owner", "owner_user_id", "updated_at"]
      )
      expect(created.json).toMatchObject({
        org_id: org.id,
        name: "OPENAI_API_KEY",
        description: "the provider key",
        owner: "organization",
        owner_user_id: null
      })
      const secretId = created.json!.id as string
      expect(secretId).toMatch(ID_PATTERN("sec"))

      const got = yield* sendAs(owner, "GET", `/v1/orgs/${org.id}/secrets/${secretId}`)
      expect(got.status).toBe(200)
      expect(got.text).not.toContain(value)
      const listed = yield* sendAs(owner, "GET", `/api/v1/orgs/${org.id}/secrets`)
      expect(listed.text).not.toContain(value)
      expect((listed.json!.data as Array<{ id: string }>).map((s) => s.id)).toEqual([secretId])

      // At rest: sealed, not the value; the runtime gets the value back.
      const sealed = yield* sealedValueOf(secretId)
      expect(sealed).toMatch(/^v1\./)
      expect(sealed).not.toContain(value)
      expect(sealed).not.toContain(Buffer.from(value).toString("base64"))
      expect(yield* revealed(secretId)).toBe(value)

      const rotated = yield* sendAs(owner, "PUT", `/v1/orgs/${org.id}/secrets/${secretId}/value`, { value: "second-value" })
      expect(rotated.status).toBe(200)
      expect(rotated.text).not.toContain("second-value")
      expect(new Date(rotated.json!.updated_at as string).getTime()).toBeGreaterThanOrEqual(
        new Date(created.json!.updated_at as string).getTime()
      )
      const resealed = yield* sealedValueOf(secretId)
      expect(resealed).not.toBe(sealed)
      expect(resealed).not.toContain("second-value")
      expect(yield* revealed(secretId)).toBe("second-value")

      // The typed client sees the same resource.
      const typed = yield* owner.client.secrets.get({ params: { orgID: org.id, secretID: secretId as never } })
      expect(typed.id).toBe(secretId)
      expect("value" in typed).toBe(false)

      yield* owner.client.secrets.remove({ params: { orgID: org.id, secretID: typed.id } })
      const gone = yield* expectFailure(owner.client.secrets.get({ params: { orgID: org.id, secretID: typed.id } }))
      expect(gone._tag).toBe("NotFound")
      const revealGone = yield* expectFailure(revealed(secretId))
      expect(revealGone._tag).toBe("NotFound")
    }))

  it.effect("names are unique per owner scope; bad bodies are invalid_request", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Names" } })
      const create = (name: string, owner_?: "personal") =>
        owner.client.secrets.create({
          params: { orgID: org.id },
          payload: { name, value: Redacted.make("v"), ...(owner_ ? { owner: owner_ } : {}) }
        })
      yield* create("TOKEN")
      const duplicate = yield* expectFailure(create("TOKEN"))
      expect(duplicate._tag).toBe("Conflict")
      const personal = yield* create("TOKEN", "personal")
      expect(personal).toMatchObject({ owner: "personal", owner_user_id: owner.user.id, name: "TOKEN" })
      expect((yield* expectFailure(create("TOKEN", "personal")))._tag).toBe("Conflict")

      const extra = yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/secrets`, { name: "A", value: "v", colour: "red" })
      expect(extra.status).toBe(400)
      expect(extra.json).toMatchObject({ code: "invalid_request" })
      const empty = yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/secrets`, { name: "B", value: "" })
      expect(empty.status).toBe(400)
      expect(empty.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/value" }] })
      const badOwner = yield* sendAs(owner, "POST", `/v1/orgs/${org.id}/secrets`, { name: "C", value: "v", owner: "team" })
      expect(badOwner.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/owner" }] })
      const rotateExtra = yield* sendAs(owner, "PUT", `/v1/orgs/${org.id}/secrets/${personal.id}/value`, {
        value: "new",
        name: "renamed"
      })
      expect(rotateExtra.status).toBe(400)
    }))

  it.effect("roles: admins manage organization secrets, members read them and keep personal ones", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const member = yield* newUser("member")
      const org = yield* owner.client.organizations.create({ payload: { name: "Roles" } })
      yield* joinOrganization(owner, org.id, member, "member")
      const orgSecret = yield* owner.client.secrets.create({
        params: { orgID: org.id },
        payload: { name: "SHARED", value: Redacted.make("shared") }
      })

      const memberCreate = yield* expectFailure(
        member.client.secrets.create({ params: { orgID: org.id }, payload: { name: "X", value: Redacted.make("x") } })
      )
      expect(memberCreate._tag).toBe("Forbidden")
      const memberRotate = yield* expectFailure(
        member.client.secrets.rotate({ params: { orgID: org.id, secretID: orgSecret.id }, payload: { value: Redacted.make("y") } })
      )
      expect(memberRotate._tag).toBe("Forbidden")
      const memberDelete = yield* expectFailure(member.client.secrets.remove({ params: { orgID: org.id, secretID: orgSecret.id } }))
      expect(memberDelete._tag).toBe("Forbidden")
      expect((yield* member.client.secrets.get({ params: { orgID: org.id, secretID: orgSecret.id } })).name).toBe("SHARED")

      const mine = yield* member.client.secrets.create({
        params: { orgID: org.id },
        payload: { name: "MINE", value: Redacted.make("mine"), owner: "personal" }
      })
      yield* member.client.secrets.rotate({ params: { orgID: org.id, secretID: mine.id }, payload: { value: Redacted.make("mine2") } })
      expect(yield* revealed(mine.id)).toBe("mine2")
      const memberList = yield* member.client.secrets.list({ params: { orgID: org.id }, query: {} })
      expect(memberList.data.map((s) => s.id).sort()).toEqual([orgSecret.id, mine.id].sort())

      // Not even the owner of the organization sees a member's personal secret.
      const ownerList = yield* owner.client.secrets.list({ params: { orgID: org.id }, query: {} })
      expect(ownerList.data.map((s) => s.id)).toEqual([orgSecret.id])
      const hidden = yield* expectFailure(owner.client.secrets.get({ params: { orgID: org.id, secretID: mine.id } }))
      expect(hidden._tag).toBe("NotFound")
      const hiddenDelete = yield* expectFailure(owner.client.secrets.remove({ params: { orgID: org.id, secretID: mine.id } }))
      expect(hiddenDelete._tag).toBe("NotFound")

      // An organization API key acts for the organization, not a user: no personal secrets.
      const key = yield* owner.client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "ci", role: "admin" } })
      const orgClient = yield* clientWith(key.token)
      const personalByKey = yield* expectFailure(
        orgClient.secrets.create({ params: { orgID: org.id }, payload: { name: "K", value: Redacted.make("k"), owner: "personal" } })
      )
      expect(personalByKey._tag).toBe("Forbidden")
      const byKey = yield* orgClient.secrets.create({ params: { orgID: org.id }, payload: { name: "K", value: Redacted.make("k") } })
      expect(byKey.owner).toBe("organization")
      expect((yield* orgClient.secrets.list({ params: { orgID: org.id }, query: {} })).data.map((s) => s.id).sort())
        .toEqual([orgSecret.id, byKey.id].sort())
    }))

  it.effect("another organization's secret is not found", () =>
    Effect.gen(function*() {
      const alice = yield* newUser("alice")
      const bob = yield* newUser("bob")
      const orgA = yield* alice.client.organizations.create({ payload: { name: "A" } })
      const orgB = yield* bob.client.organizations.create({ payload: { name: "B" } })
      const secret = yield* alice.client.secrets.create({ params: { orgID: orgA.id }, payload: { name: "S", value: Redacted.make("s") } })
      expect((yield* expectFailure(bob.client.secrets.get({ params: { orgID: orgA.id, secretID: secret.id } })))._tag).toBe("NotFound")
      expect((yield* expectFailure(bob.client.secrets.get({ params: { orgID: orgB.id, secretID: secret.id } })))._tag).toBe("NotFound")
      expect((yield* expectFailure(bob.client.secrets.list({ params: { orgID: orgA.id }, query: {} })))._tag).toBe("NotFound")
      const rotate = yield* expectFailure(
        bob.client.secrets.rotate({ params: { orgID: orgB.id, secretID: secret.id }, payload: { value: Redacted.make("x") } })
      )
      expect(rotate._tag).toBe("NotFound")
      expect((yield* expectFailure(bob.client.secrets.remove({ params: { orgID: orgB.id, secretID: secret.id } })))._tag)
        .toBe("NotFound")
      expect(yield* revealed(secret.id)).toBe("s")
    }))

  it.effect("grants share organization secrets with projects; resolveForProject follows them", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const stranger = yield* newUser("stranger")
      const org = yield* owner.client.organizations.create({ payload: { name: "Grants" } })
      const otherOrg = yield* stranger.client.organizations.create({ payload: { name: "Other" } })
      const foreignProject = yield* stranger.client.projects.create({ params: { orgID: otherOrg.id }, payload: { name: "F" } })
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "P" } })
      const secret = yield* owner.client.secrets.create({ params: { orgID: org.id }, payload: { name: "DB_URL", value: Redacted.make("pg") } })
      const secrets = yield* Secrets
      const resolve = (userId: typeof owner.user.id | null, name: string) =>
        secrets.resolveForProject(org.id, project.id, userId, name)

      expect(Option.isNone(yield* resolve(null, "DB_URL"))).toBe(true)
      const grant = yield* owner.client.secrets.createGrant({
        params: { orgID: org.id, secretID: secret.id },
        payload: { target_project_id: project.id }
      })
      expect(grant).toMatchObject({ org_id: org.id, secret_id: secret.id, target_project_id: project.id })
      expect(grant.id).toMatch(ID_PATTERN("secgrant"))
      expect(yield* resolve(null, "DB_URL")).toEqual(Option.some({ id: secret.id }))
      expect(Option.isNone(yield* resolve(null, "OTHER"))).toBe(true)

      const again = yield* expectFailure(
        owner.client.secrets.createGrant({ params: { orgID: org.id, secretID: secret.id }, payload: { target_project_id: project.id } })
      )
      expect(again._tag).toBe("Conflict")
      const foreign = yield* expectFailure(
        owner.client.secrets.createGrant({
          params: { orgID: org.id, secretID: secret.id },
          payload: { target_project_id: foreignProject.id }
        })
      )
      expect(foreign).toMatchObject({ _tag: "InvalidRequest", issues: [{ path: "/target_project_id" }] })
      const grants = yield* owner.client.secrets.listGrants({ params: { orgID: org.id, secretID: secret.id }, query: {} })
      expect(grants.data.map((g) => g.id)).toEqual([grant.id])

      // A personal secret is never granted; it resolves for its owner in any project, ahead of an org secret.
      const personal = yield* owner.client.secrets.create({
        params: { orgID: org.id },
        payload: { name: "DB_URL", value: Redacted.make("mine"), owner: "personal" }
      })
      const grantPersonal = yield* expectFailure(
        owner.client.secrets.createGrant({ params: { orgID: org.id, secretID: personal.id }, payload: { target_project_id: project.id } })
      )
      expect(grantPersonal).toMatchObject({
        _tag: "InvalidRequest",
        error: `Secret ${personal.id} is a personal secret: it is usable by its owner in every project of the organization and is not granted to projects`
      })
      expect(yield* resolve(owner.user.id, "DB_URL")).toEqual(Option.some({ id: personal.id }))
      expect(yield* resolve(stranger.user.id, "DB_URL")).toEqual(Option.some({ id: secret.id }))

      yield* owner.client.secrets.removeGrant({ params: { orgID: org.id, secretID: secret.id, grantID: grant.id } })
      expect(Option.isNone(yield* resolve(null, "DB_URL"))).toBe(true)
      const removedAgain = yield* expectFailure(
        owner.client.secrets.removeGrant({ params: { orgID: org.id, secretID: secret.id, grantID: grant.id } })
      )
      expect(removedAgain._tag).toBe("NotFound")
    }))

  it.effect("a secret used by a provider config cannot be deleted, nor its owner removed", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const admin = yield* newUser("admin")
      const org = yield* owner.client.organizations.create({ payload: { name: "Refs" } })
      yield* joinOrganization(owner, org.id, admin, "admin")
      const orgSecret = yield* owner.client.secrets.create({ params: { orgID: org.id }, payload: { name: "KEY", value: Redacted.make("k") } })
      const provider = yield* owner.client.modelProviderConfigs.create({
        params: { orgID: org.id },
        payload: { name: "OpenAI", api_format: "openai-responses", base_url: "https://api.openai.com/v1", auth_secret_id: orgSecret.id }
      })
      const blocked = yield* expectFailure(owner.client.secrets.remove({ params: { orgID: org.id, secretID: orgSecret.id } }))
      expect(blocked).toMatchObject({ _tag: "Conflict", error: expect.stringContaining(`"OpenAI" (${provider.id})`) })

      // The admin's personal secret behind a provider config blocks the admin's removal.
      const personal = yield* admin.client.secrets.create({
        params: { orgID: org.id },
        payload: { name: "MY_KEY", value: Redacted.make("p"), owner: "personal" }
      })
      const personalProvider = yield* admin.client.modelProviderConfigs.create({
        params: { orgID: org.id },
        payload: { name: "Mine", api_format: "anthropic-messages", base_url: "https://api.anthropic.com/v1", auth_secret_id: personal.id }
      })
      const removal = yield* expectFailure(owner.client.members.remove({ params: { orgID: org.id, userID: admin.user.id } }))
      expect(removal).toMatchObject({
        _tag: "Conflict",
        error: expect.stringMatching(new RegExp(`${personal.id}.*${personalProvider.id}`))
      })

      // Another admin renames it, but does not send the admin's key elsewhere; its owner does.
      const personalPath = { orgID: org.id, modelProviderConfigID: personalProvider.id }
      const moved = yield* expectFailure(owner.client.modelProviderConfigs.update({
        params: personalPath,
        payload: { base_url: "https://collector.example.com/v1" }
      }))
      expect(moved).toMatchObject({ _tag: "Forbidden", error: expect.stringContaining(`a colleague's personal secret (${personal.id})`) })
      expect(
        yield* owner.client.modelProviderConfigs.update({
          params: personalPath,
          payload: { name: "Theirs", base_url: "https://api.anthropic.com/v1" }
        })
      ).toMatchObject({ name: "Theirs", base_url: "https://api.anthropic.com/v1", auth_secret_id: personal.id })
      expect(yield* admin.client.modelProviderConfigs.update({ params: personalPath, payload: { base_url: "https://proxy.example.com/v1" } }))
        .toMatchObject({ base_url: "https://proxy.example.com/v1" })
      // With a key of their own in the same request, another admin points it anywhere.
      expect(
        yield* owner.client.modelProviderConfigs.update({
          params: personalPath,
          payload: { base_url: "https://api.anthropic.com/v1", auth_secret_id: orgSecret.id }
        })
      ).toMatchObject({ auth_secret_id: orgSecret.id })

      // Once nothing refers to them, the secret goes and the member goes with their personal secrets.
      yield* owner.client.modelProviderConfigs.update({ params: personalPath, payload: { auth_secret_id: null } })
      yield* owner.client.members.remove({ params: { orgID: org.id, userID: admin.user.id } })
      expect(yield* sealedValueOf(personal.id)).toBeUndefined()
      yield* owner.client.modelProviderConfigs.remove({ params: { orgID: org.id, modelProviderConfigID: provider.id } })
      yield* owner.client.secrets.remove({ params: { orgID: org.id, secretID: orgSecret.id } })
    }))
})

describe("the secret key", () => {
  const keyWith = (overrides: Parameters<typeof testConfig>[0]) =>
    Effect.map(SecretKey, (key) => Buffer.from(Redacted.value(key))).pipe(
      Effect.provide(SecretKey.layer.pipe(Layer.provide(testConfig(overrides))))
    )

  it.effect("is generated once into the data directory, mode 0600, and reused", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "secret-key-"))
      try {
        const first = yield* keyWith({ dataDir, secretKey: Option.none() })
        expect(first).toHaveLength(32)
        const file = join(dataDir, "secret.key")
        expect(statSync(file).mode & 0o777).toBe(0o600)
        expect(Buffer.from(readFileSync(file, "utf8").trim(), "base64").equals(first)).toBe(true)
        const second = yield* keyWith({ dataDir, secretKey: Option.none() })
        expect(second.equals(first)).toBe(true)
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }))

  it.effect("AGENT_PLATFORM_SECRET_KEY takes 64 hex characters or base64 of 32 bytes", () =>
    Effect.gen(function*() {
      const bytes = randomBytes(32)
      const fromHex = yield* keyWith({ secretKey: Option.some(Redacted.make(bytes.toString("hex"))) })
      expect(fromHex.equals(bytes)).toBe(true)
      const fromBase64 = yield* keyWith({ secretKey: Option.some(Redacted.make(bytes.toString("base64"))) })
      expect(fromBase64.equals(bytes)).toBe(true)
      for (const bad of ["short", randomBytes(16).toString("base64"), "z".repeat(64)]) {
        const error = yield* Effect.flip(keyWith({ secretKey: Option.some(Redacted.make(bad)) }))
        expect(error.message).toContain("AGENT_PLATFORM_SECRET_KEY must be 32 bytes")
      }
    }))
})
