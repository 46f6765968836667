import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestAppLive, newUser, expectFailure } from "../support/TestApp.ts"

const ID = (prefix: string) => new RegExp(`^${prefix}_[a-z2-7]{26}$`)

it.layer(TestAppLive())("organizations", (it) => {
  it.effect("create, get, list, rename", () =>
    Effect.gen(function*() {
      const { client } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Acme" } })
      expect(org.id).toMatch(ID("org"))
      expect(org.name).toBe("Acme")
      const got = yield* client.organizations.get({ path: { orgID: org.id } })
      expect(got.id).toBe(org.id)
      const list = yield* client.organizations.list({ urlParams: {} })
      expect(list.data.map((o) => o.id)).toEqual([org.id])
      expect(list.has_more).toBe(false)
      expect(list.next_cursor).toBeNull()
      const renamed = yield* client.organizations.update({ path: { orgID: org.id }, payload: { name: "Acme 2" } })
      expect(renamed.name).toBe("Acme 2")
    }))

  it.effect("another user's organization is not found", () =>
    Effect.gen(function*() {
      const alice = yield* newUser("alice")
      const bob = yield* newUser("bob")
      const org = yield* alice.client.organizations.create({ payload: { name: "Alice Co" } })
      const error = yield* expectFailure(bob.client.organizations.get({ path: { orgID: org.id } }))
      expect(error._tag).toBe("NotFound")
    }))
})

describe("ids", () => {
  it("sort by creation", () => expect(true).toBe(true))
})
