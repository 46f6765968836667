import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { describeApp, expectFailure, ID_PATTERN, joinOrganization, newUser } from "../support/TestApp.ts"

describeApp()("projects", (it) => {
  it.effect("create, list, get, rename, delete", () =>
    Effect.gen(function*() {
      const { client } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Org" } })
      const orgID = org.id
      const project = yield* client.projects.create({ params: { orgID }, payload: { name: "Web" } })
      expect(project.id).toMatch(ID_PATTERN("proj"))
      expect(project).toMatchObject({ org_id: orgID, name: "Web" })
      const other = yield* client.projects.create({ params: { orgID }, payload: { name: "API" } })
      expect((yield* client.projects.list({ params: { orgID }, query: {} })).data.map((p) => p.id)).toEqual([
        project.id,
        other.id
      ])
      expect((yield* client.projects.get({ params: { orgID, projectID: project.id } })).name).toBe("Web")
      const renamed = yield* client.projects.update({ params: { orgID, projectID: project.id }, payload: { name: "Site" } })
      expect(renamed.name).toBe("Site")
      const taken = yield* expectFailure(
        client.projects.update({ params: { orgID, projectID: project.id }, payload: { name: "API" } })
      )
      expect(taken._tag).toBe("Conflict")
      const duplicate = yield* expectFailure(client.projects.create({ params: { orgID }, payload: { name: "API" } }))
      expect(duplicate._tag).toBe("Conflict")
      yield* client.projects.remove({ params: { orgID, projectID: project.id } })
      const gone = yield* expectFailure(client.projects.get({ params: { orgID, projectID: project.id } }))
      expect(gone._tag).toBe("NotFound")
    }))

  it.effect("the same project deleted in parallel: one 204, the others 404", () =>
    Effect.gen(function*() {
      const { client } = yield* newUser()
      const org = yield* client.organizations.create({ payload: { name: "Org" } })
      const project = yield* client.projects.create({ params: { orgID: org.id }, payload: { name: "Doomed" } })
      const deletes = yield* Effect.all(
        Array.from({ length: 10 }, () =>
          Effect.result(
            client.projects.remove({ params: { orgID: org.id, projectID: project.id }, responseMode: "decoded-and-response" })
          )),
        { concurrency: "unbounded" }
      )
      const statuses = deletes.map((result) => result._tag === "Success" ? result.success[1].status : result.failure._tag)
      expect(statuses.filter((status) => status === 204)).toHaveLength(1)
      expect(statuses.filter((status) => status !== 204)).toEqual(Array(9).fill("NotFound"))
    }))

  it.effect("a project of another organization is not found, even through the caller's own organization", () =>
    Effect.gen(function*() {
      const alice = yield* newUser("alice")
      const bob = yield* newUser("bob")
      const orgA = yield* alice.client.organizations.create({ payload: { name: "A" } })
      const orgB = yield* bob.client.organizations.create({ payload: { name: "B" } })
      const project = yield* alice.client.projects.create({ params: { orgID: orgA.id }, payload: { name: "secret" } })
      const direct = yield* expectFailure(bob.client.projects.get({ params: { orgID: orgA.id, projectID: project.id } }))
      expect(direct._tag).toBe("NotFound")
      const crossed = yield* expectFailure(bob.client.projects.get({ params: { orgID: orgB.id, projectID: project.id } }))
      expect(crossed._tag).toBe("NotFound")
      const deleted = yield* expectFailure(bob.client.projects.remove({ params: { orgID: orgB.id, projectID: project.id } }))
      expect(deleted._tag).toBe("NotFound")
    }))

  it.effect("members read projects; only admins create, rename and delete them", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const member = yield* newUser("member")
      const org = yield* owner.client.organizations.create({ payload: { name: "Org" } })
      yield* joinOrganization(owner, org.id, member, "member")
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "p" } })
      expect((yield* member.client.projects.get({ params: { orgID: org.id, projectID: project.id } })).id).toBe(project.id)
      const attempts: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
        member.client.projects.create({ params: { orgID: org.id }, payload: { name: "q" } }),
        member.client.projects.update({ params: { orgID: org.id, projectID: project.id }, payload: { name: "q" } }),
        member.client.projects.remove({ params: { orgID: org.id, projectID: project.id } })
      ]
      for (const attempt of attempts) {
        expect((yield* expectFailure(attempt))._tag).toBe("Forbidden")
      }
    }))

  it.effect("project members: add organization members, project admins manage, remove", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const lead = yield* newUser("lead")
      const dev = yield* newUser("dev")
      const outsider = yield* newUser("outsider")
      const org = yield* owner.client.organizations.create({ payload: { name: "Org" } })
      yield* joinOrganization(owner, org.id, lead, "member")
      yield* joinOrganization(owner, org.id, dev, "member")
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "p" } })
      const path = { orgID: org.id, projectID: project.id }

      const denied = yield* expectFailure(lead.client.projectMembers.add({ params: path, payload: { user_id: dev.user.id } }))
      expect(denied._tag).toBe("Forbidden")
      const leadMember = yield* owner.client.projectMembers.add({ params: path, payload: { user_id: lead.user.id, role: "admin" } })
      expect(leadMember).toMatchObject({ project_id: project.id, user_id: lead.user.id, role: "admin", email: lead.user.email })
      // A project admin manages the project's members, and may rename the project.
      const devMember = yield* lead.client.projectMembers.add({ params: path, payload: { user_id: dev.user.id } })
      expect(devMember.role).toBe("member")
      expect((yield* lead.client.projects.update({ params: path, payload: { name: "renamed" } })).name).toBe("renamed")
      const twice = yield* expectFailure(lead.client.projectMembers.add({ params: path, payload: { user_id: dev.user.id } }))
      expect(twice._tag).toBe("Conflict")
      const stranger = yield* expectFailure(owner.client.projectMembers.add({ params: path, payload: { user_id: outsider.user.id } }))
      expect(stranger._tag).toBe("NotFound")

      const list = yield* dev.client.projectMembers.list({ params: path, query: {} })
      expect(list.data.map((m) => m.user_id).sort()).toEqual([lead.user.id, dev.user.id].sort())
      yield* lead.client.projectMembers.remove({ params: { ...path, userID: dev.user.id } })
      const again = yield* expectFailure(lead.client.projectMembers.remove({ params: { ...path, userID: dev.user.id } }))
      expect(again._tag).toBe("NotFound")
    }))
})
