import { expect } from "@effect/vitest"
import { HttpClientRequest } from "effect/http"
import { Effect } from "effect"
import { describeApp, expectFailure, ID_PATTERN, joinOrganization, newUser, rawRequest } from "../support/TestApp.ts"

describeApp()("organizations", (it) => {
  it.effect("create, get, list, rename; the creator is the owner", () =>
    Effect.gen(function*() {
      const owner = yield* newUser()
      const org = yield* owner.client.organizations.create({ payload: { name: "Acme" } })
      expect(org.id).toMatch(ID_PATTERN("org"))
      expect(org.name).toBe("Acme")
      expect(org.created_at).toBeInstanceOf(Date)
      expect((yield* owner.client.organizations.get({ params: { orgID: org.id } })).id).toBe(org.id)
      const list = yield* owner.client.organizations.list({ query: {} })
      expect(list).toEqual({ data: [org], has_more: false, next_cursor: null })
      const renamed = yield* owner.client.organizations.update({ params: { orgID: org.id }, payload: { name: "Acme 2" } })
      expect(renamed.name).toBe("Acme 2")
      const members = yield* owner.client.members.list({ params: { orgID: org.id }, query: {} })
      expect(members.data.map((m) => [m.user_id, m.role])).toEqual([[owner.user.id, "owner"]])
    }))

  it.effect("lists page with limit and cursor, in creation order", () =>
    Effect.gen(function*() {
      const owner = yield* newUser()
      const created = []
      for (const name of ["one", "two", "three"]) {
        created.push((yield* owner.client.organizations.create({ payload: { name } })).id)
      }
      const first = yield* owner.client.organizations.list({ query: { limit: 2 } })
      expect(first.data.map((o) => o.id)).toEqual(created.slice(0, 2))
      expect(first.has_more).toBe(true)
      const second = yield* owner.client.organizations.list({ query: { limit: 2, cursor: first.next_cursor! } })
      expect(second.data.map((o) => o.id)).toEqual(created.slice(2))
      expect(second).toMatchObject({ has_more: false, next_cursor: null })
      const bad = yield* expectFailure(owner.client.organizations.list({ query: { cursor: "nonsense" } }))
      expect(bad._tag).toBe("InvalidRequest")
      const tooMany = yield* rawRequest(
        HttpClientRequest.get("/v1/orgs?limit=101").pipe(HttpClientRequest.bearerToken(owner.token))
      )
      expect(tooMany.status).toBe(400)
      expect(tooMany.json).toMatchObject({ code: "invalid_request", issues: [{ path: "/limit" }] })
    }))

  it.effect("a cursor pages only the list it came from: another list's, an altered or an old one is 400", () =>
    Effect.gen(function*() {
      const owner = yield* newUser()
      const orgA = yield* owner.client.organizations.create({ payload: { name: "A" } })
      const orgB = yield* owner.client.organizations.create({ payload: { name: "B" } })
      for (const org of [orgA, orgB]) {
        for (const name of ["one", "two", "three"]) {
          yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name } })
        }
      }
      const pageOfA = yield* owner.client.projects.list({ params: { orgID: orgA.id }, query: { limit: 1 } })
      const cursorOfA = pageOfA.next_cursor!
      const nextOfA = yield* owner.client.projects.list({ params: { orgID: orgA.id }, query: { limit: 1, cursor: cursorOfA } })
      expect(nextOfA.data[0].org_id).toBe(orgA.id)
      const cursorOfOrgs = (yield* owner.client.organizations.list({ query: { limit: 1 } })).next_cursor!
      const decoded = Buffer.from(cursorOfA, "base64url").toString()
      const altered = Buffer.from(decoded.slice(0, -1) + (decoded.endsWith("a") ? "b" : "a")).toString("base64url")
      const oldFormat = Buffer.from(pageOfA.data[0].id).toString("base64url")
      const refused: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
        owner.client.projects.list({ params: { orgID: orgB.id }, query: { cursor: cursorOfA } }),
        owner.client.projects.list({ params: { orgID: orgA.id }, query: { cursor: cursorOfOrgs } }),
        owner.client.organizations.list({ query: { cursor: cursorOfA } }),
        owner.client.projects.list({ params: { orgID: orgA.id }, query: { cursor: altered } }),
        owner.client.projects.list({ params: { orgID: orgA.id }, query: { cursor: oldFormat } })
      ]
      for (const attempt of refused) {
        const error = yield* expectFailure(attempt)
        expect(error).toMatchObject({
          _tag: "InvalidRequest",
          error: expect.stringContaining("not from this list"),
          issues: [{ path: "/cursor", message: expect.stringContaining("start again without one") }]
        })
      }
    }))

  it.effect("another user's organization is not found, for reading and writing", () =>
    Effect.gen(function*() {
      const alice = yield* newUser("alice")
      const bob = yield* newUser("bob")
      const org = yield* alice.client.organizations.create({ payload: { name: "Alice Co" } })
      const read = yield* expectFailure(bob.client.organizations.get({ params: { orgID: org.id } }))
      expect(read._tag).toBe("NotFound")
      const write = yield* expectFailure(
        bob.client.organizations.update({ params: { orgID: org.id }, payload: { name: "Mine" } })
      )
      expect(write._tag).toBe("NotFound")
      expect((yield* bob.client.organizations.list({ query: {} })).data).toEqual([])
    }))

  it.effect("a member reads but may not rename", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const member = yield* newUser("member")
      const org = yield* owner.client.organizations.create({ payload: { name: "Team" } })
      yield* joinOrganization(owner, org.id, member, "member")
      expect((yield* member.client.organizations.get({ params: { orgID: org.id } })).name).toBe("Team")
      const error = yield* expectFailure(
        member.client.organizations.update({ params: { orgID: org.id }, payload: { name: "Mine" } })
      )
      expect(error._tag).toBe("Forbidden")
    }))
})
