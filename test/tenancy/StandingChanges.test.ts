/**
 * A change to a caller's key or standing reaches the caller's very next request, though the
 * request just before it was answered with the old one: on the embedded database the principals
 * of requests are kept until such a change (src/services/tenancy/PrincipalCache.ts), so each case
 * here uses the key first. On Postgres nothing is kept, and the same cases hold.
 */
import { expect } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { clientWith, describeApp, expectFailure, joinOrganization, newUser } from "../support/TestApp.ts"

describeApp()("a change to a key or a standing, at the next request", (it) => {
  it.effect("a deleted key is refused, personal or the organization's", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Keys" } })
      const personal = yield* owner.client.user.createApiKey({ payload: { name: "laptop" } })
      const asPersonal = yield* clientWith(personal.token)
      const orgKey = yield* owner.client.organizationApiKeys.create({ params: { orgID: org.id }, payload: { name: "ci", role: "admin" } })
      const asOrgKey = yield* clientWith(orgKey.token)
      expect((yield* asPersonal.user.get()).id).toBe(owner.user.id)
      expect((yield* asPersonal.organizations.get({ params: { orgID: org.id } })).id).toBe(org.id)
      expect((yield* asOrgKey.organizations.get({ params: { orgID: org.id } })).id).toBe(org.id)

      yield* owner.client.user.deleteApiKey({ params: { keyID: personal.id } })
      yield* owner.client.organizationApiKeys.remove({ params: { orgID: org.id, keyID: orgKey.id } })
      expect((yield* expectFailure(asPersonal.user.get()))._tag).toBe("Unauthorized")
      expect((yield* expectFailure(asPersonal.organizations.get({ params: { orgID: org.id } })))._tag).toBe("Unauthorized")
      expect((yield* expectFailure(asOrgKey.organizations.get({ params: { orgID: org.id } })))._tag).toBe("Unauthorized")
    }))

  it.effect("a key deleted by a statement outside any route is refused too", () =>
    Effect.gen(function*() {
      const user = yield* newUser()
      const key = yield* user.client.user.createApiKey({ payload: { name: "removed by hand" } })
      const asKey = yield* clientWith(key.token)
      expect((yield* asKey.user.get()).id).toBe(user.user.id)
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM api_keys WHERE id = ${key.id}`
      expect((yield* expectFailure(asKey.user.get()))._tag).toBe("Unauthorized")
    }))

  it.effect("a demoted admin may no longer rename; a removed member no longer finds the organization", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const admin = yield* newUser("admin")
      const org = yield* owner.client.organizations.create({ payload: { name: "Roles" } })
      yield* joinOrganization(owner, org.id, admin, "admin")
      expect((yield* admin.client.organizations.update({ params: { orgID: org.id }, payload: { name: "By admin" } })).name)
        .toBe("By admin")

      yield* owner.client.members.update({ params: { orgID: org.id, userID: admin.user.id }, payload: { role: "member" } })
      const rename = yield* expectFailure(admin.client.organizations.update({ params: { orgID: org.id }, payload: { name: "Again" } }))
      expect(rename._tag).toBe("Forbidden")
      expect((yield* admin.client.organizations.get({ params: { orgID: org.id } })).name).toBe("By admin")

      yield* owner.client.members.remove({ params: { orgID: org.id, userID: admin.user.id } })
      expect((yield* expectFailure(admin.client.organizations.get({ params: { orgID: org.id } })))._tag).toBe("NotFound")
    }))

  it.effect("a project admin removed from the project may no longer rename it; a deleted project's agents are not found", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const lead = yield* newUser("lead")
      const org = yield* owner.client.organizations.create({ payload: { name: "Projects" } })
      yield* joinOrganization(owner, org.id, lead, "member")
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "p" } })
      const path = { orgID: org.id, projectID: project.id }
      yield* owner.client.projectMembers.add({ params: path, payload: { user_id: lead.user.id, role: "admin" } })
      expect((yield* lead.client.projects.update({ params: path, payload: { name: "renamed" } })).name).toBe("renamed")

      yield* owner.client.projectMembers.remove({ params: { ...path, userID: lead.user.id } })
      const rename = yield* expectFailure(lead.client.projects.update({ params: path, payload: { name: "again" } }))
      expect(rename._tag).toBe("Forbidden")

      expect((yield* lead.client.agents.list({ params: path, query: {} })).data).toEqual([])
      yield* owner.client.projects.remove({ params: path })
      expect((yield* expectFailure(lead.client.agents.list({ params: path, query: {} })))._tag).toBe("NotFound")
    }))
})
