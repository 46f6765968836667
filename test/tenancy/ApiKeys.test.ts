import { expect } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { MAX_API_KEYS_PER_OWNER } from "../../src/services/tenancy/ApiKeys.ts"
import { describeApp, clientWith, expectFailure, ID_PATTERN, newUser, outcomesAtOnce } from "../support/TestApp.ts"

/**
 * `copies` more of the user's keys and of the organization key `orgKeyId`, as copies of them (ids
 * and token hashes: the first's 16 characters, then a count in hexadecimal with 0, 1, 8, 9 spelled
 * w, x, y, z).
 */
const copyKeys = (userId: string, orgKeyId: string, copies: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO api_keys (id, token_hash, name, user_id, org_id, role)
      SELECT 'key_' || left(substr(id, 5), 16) || translate(lpad(to_hex(i), 10, '0'), '0189', 'wxyz'),
        token_hash || i, name, user_id, org_id, role
      FROM api_keys, generate_series(1, ${copies}::int) AS i
      WHERE user_id = ${userId} OR id = ${orgKeyId}`)

/** How many keys the user and the organization have together. */
const keysOf = (userId: string, orgId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ count: number }>`SELECT count(*)::int AS count FROM api_keys WHERE user_id = ${userId} OR org_id = ${orgId}`,
      ([row]) => row.count
    ))

describeApp()("API keys", (it) => {
  it.effect("personal keys: the token is shown once, lists never show it, deletion revokes", () =>
    Effect.gen(function*() {
      const { client, user } = yield* newUser()
      const me = yield* client.user.get()
      expect(me).toMatchObject({ id: user.id, email: user.email })
      expect(me.id).toMatch(ID_PATTERN("usr"))

      const key = yield* client.user.createApiKey({ payload: { name: "laptop" } })
      expect(key.id).toMatch(ID_PATTERN("key"))
      expect(key.token).toMatch(/^apk_[A-Za-z0-9_-]{43}$/)
      const list = yield* client.user.listApiKeys({ query: {} })
      expect(list.data.map((k) => k.name)).toEqual(["test", "laptop"])
      expect(list.data.every((k) => !("token" in k))).toBe(true)

      yield* client.user.deleteApiKey({ params: { keyID: key.id } })
      expect((yield* expectFailure((yield* clientWith(key.token)).user.get()))._tag).toBe("Unauthorized")
      const again = yield* expectFailure(client.user.deleteApiKey({ params: { keyID: key.id } }))
      expect(again._tag).toBe("NotFound")
    }))

  it.effect("a user cannot delete another user's key", () =>
    Effect.gen(function*() {
      const alice = yield* newUser("alice")
      const bob = yield* newUser("bob")
      const key = yield* alice.client.user.createApiKey({ payload: { name: "alice's" } })
      expect((yield* expectFailure(bob.client.user.deleteApiKey({ params: { keyID: key.id } })))._tag).toBe("NotFound")
      expect((yield* (yield* clientWith(key.token)).user.get()).id).toBe(alice.user.id)
    }))

  it.effect("organization keys act for their organization only, with their role", () =>
    Effect.gen(function*() {
      const owner = yield* newUser()
      const orgA = yield* owner.client.organizations.create({ payload: { name: "A" } })
      const orgB = yield* owner.client.organizations.create({ payload: { name: "B" } })
      const projectA = yield* owner.client.projects.create({ params: { orgID: orgA.id }, payload: { name: "a" } })

      const adminKey = yield* owner.client.organizationApiKeys.create({
        params: { orgID: orgB.id },
        payload: { name: "ci", role: "admin" }
      })
      expect(adminKey).toMatchObject({ org_id: orgB.id, name: "ci", role: "admin" })
      const asB = yield* clientWith(adminKey.token)

      // Another organization's project and organization are not found.
      expect((yield* expectFailure(asB.projects.get({ params: { orgID: orgA.id, projectID: projectA.id } })))._tag)
        .toBe("NotFound")
      expect((yield* expectFailure(asB.organizations.get({ params: { orgID: orgA.id } })))._tag).toBe("NotFound")
      expect((yield* asB.organizations.list({ query: {} })).data.map((o) => o.id)).toEqual([orgB.id])
      // An admin key manages its own organization.
      const project = yield* asB.projects.create({ params: { orgID: orgB.id }, payload: { name: "by key" } })
      expect(project.org_id).toBe(orgB.id)
      // It is not a user.
      expect((yield* expectFailure(asB.user.get()))._tag).toBe("Forbidden")
      expect((yield* expectFailure(asB.organizations.create({ payload: { name: "C" } })))._tag).toBe("Forbidden")

      const memberKey = yield* owner.client.organizationApiKeys.create({
        params: { orgID: orgB.id },
        payload: { name: "reader", role: "member" }
      })
      const asMember = yield* clientWith(memberKey.token)
      expect((yield* asMember.projects.list({ params: { orgID: orgB.id }, query: {} })).data).toHaveLength(1)
      const denied = yield* expectFailure(asMember.projects.create({ params: { orgID: orgB.id }, payload: { name: "no" } }))
      expect(denied._tag).toBe("Forbidden")

      const keys = yield* owner.client.organizationApiKeys.list({ params: { orgID: orgB.id }, query: {} })
      expect(keys.data.map((k) => k.name)).toEqual(["ci", "reader"])
      yield* owner.client.organizationApiKeys.remove({ params: { orgID: orgB.id, keyID: adminKey.id } })
      expect((yield* expectFailure(asB.organizations.list({ query: {} })))._tag).toBe("Unauthorized")
    }))

  it.effect("key names may repeat: a rotation makes the new key under the old name, ids tell them apart", () =>
    Effect.gen(function*() {
      const owner = yield* newUser()
      const org = yield* owner.client.organizations.create({ payload: { name: "Rotation" } })
      const path = { orgID: org.id }
      const old = yield* owner.client.organizationApiKeys.create({ params: path, payload: { name: "ci", role: "member" } })
      const next = yield* owner.client.organizationApiKeys.create({ params: path, payload: { name: "ci", role: "member" } })
      expect(next.id).not.toBe(old.id)
      expect(next.token).not.toBe(old.token)
      const listed = yield* owner.client.organizationApiKeys.list({ params: path, query: {} })
      expect(listed.data.map((k) => [k.id, k.name])).toEqual([[old.id, "ci"], [next.id, "ci"]])
      // Both work until the old one is deleted, by its id; the new one goes on working.
      yield* owner.client.organizationApiKeys.remove({ params: { ...path, keyID: old.id } })
      expect((yield* expectFailure((yield* clientWith(old.token)).organizations.get({ params: path })))._tag).toBe("Unauthorized")
      expect((yield* (yield* clientWith(next.token)).organizations.get({ params: path })).id).toBe(org.id)
      // Personal keys alike.
      const first = yield* owner.client.user.createApiKey({ payload: { name: "laptop" } })
      const second = yield* owner.client.user.createApiKey({ payload: { name: "laptop" } })
      expect(second.id).not.toBe(first.id)
      expect((yield* owner.client.user.listApiKeys({ query: {} })).data.map((k) => k.name)).toEqual(["test", "laptop", "laptop"])
    }))

  it.effect("only admins manage organization keys", () =>
    Effect.gen(function*() {
      const owner = yield* newUser()
      const org = yield* owner.client.organizations.create({ payload: { name: "Keys" } })
      const memberKey = yield* owner.client.organizationApiKeys.create({
        params: { orgID: org.id },
        payload: { name: "member", role: "member" }
      })
      const asMember = yield* clientWith(memberKey.token)
      const error = yield* expectFailure(
        asMember.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "x", role: "admin" } })
      )
      expect(error._tag).toBe("Forbidden")
      const outsider = yield* newUser("outsider")
      const hidden = yield* expectFailure(outsider.client.organizationApiKeys.list({ params: { orgID: org.id }, query: {} }))
      expect(hidden._tag).toBe("NotFound")
    }))

  it.effect("a user, and an organization, have at most MAX_API_KEYS_PER_OWNER keys: one more is 409 conflict, nothing made; deleting one makes room", () =>
    Effect.gen(function*() {
      const { client, user } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Keys" } })
      const orgKey = yield* client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "ci", role: "member" } })
      yield* copyKeys(user.id, orgKey.id, MAX_API_KEYS_PER_OWNER - 1)
      const personal = yield* expectFailure(client.user.createApiKey({ payload: { name: "one more" } }))
      expect(personal).toMatchObject({
        _tag: "Conflict",
        error: `You have ${MAX_API_KEYS_PER_OWNER} API keys, the most one may have; delete a key no longer used to make another`
      })
      const organization = yield* expectFailure(
        client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "one more", role: "member" } })
      )
      expect(organization).toMatchObject({
        _tag: "Conflict",
        error: `This organization has ${MAX_API_KEYS_PER_OWNER} API keys, the most one may have; delete a key no longer used to make another`
      })
      expect(yield* keysOf(user.id, org.id)).toBe(2 * MAX_API_KEYS_PER_OWNER)

      yield* client.organizationApiKeys.remove({ params: { orgID: org.id, keyID: orgKey.id } })
      const made = yield* client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "again", role: "member" } })
      expect(made.id).toMatch(ID_PATTERN("key"))
    }))
  it.effect("keys created at once stop at MAX_API_KEYS_PER_OWNER: 50 at once, 10 short of it, make 10, the others are 409", () =>
    Effect.gen(function*() {
      const { client, user } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Keys at once" } })
      const orgKey = yield* client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "ci", role: "member" } })
      yield* copyKeys(user.id, orgKey.id, MAX_API_KEYS_PER_OWNER - 11)
      const outcomes = yield* outcomesAtOnce([
        ...Array.from({ length: 50 }, () => client.user.createApiKey({ payload: { name: "at once" } })),
        ...Array.from({ length: 50 }, () =>
          client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "at once", role: "member" } }))
      ])
      for (const owners of [outcomes.slice(0, 50), outcomes.slice(50)]) {
        expect(owners.filter((outcome) => outcome === "succeeded")).toHaveLength(10)
        expect(owners.filter((outcome) => outcome !== "succeeded")).toEqual(Array(40).fill("Conflict"))
      }
      expect(yield* keysOf(user.id, org.id)).toBe(2 * MAX_API_KEYS_PER_OWNER)
    }))
})
