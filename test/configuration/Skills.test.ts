import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { SKILL_CONTENT_MAX_BYTES } from "../../src/domain/configuration/Skills.ts"
import { describeApp, expectFailure, ID_PATTERN, joinOrganization, newUser, rawRequest } from "../support/TestApp.ts"

/** A user with an organization and two projects. */
const setup = Effect.gen(function*() {
  const owner = yield* newUser("skills")
  const org = yield* owner.client.organizations.create({ payload: { name: "Skills Org" } })
  const projectA = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "A" } })
  const projectB = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "B" } })
  return { ...owner, org, projectA, projectB }
})

const content = (text: string, files?: Record<string, string>) =>
  files === undefined ? { "SKILL.md": text } : { "SKILL.md": text, files }

describeApp()("skills", (it) => {
  it.effect("create, get, list, versions, delete", () =>
    Effect.gen(function*() {
      const { client, org, projectA } = yield* setup
      const skill = yield* client.skills.create({
        params: { orgID: org.id },
        payload: {
          name: "Deploy",
          description: "How to deploy",
          owner_project_id: projectA.id,
          content: content("# Deploy\nRun make deploy.", { "scripts/deploy.sh": "make deploy" })
        }
      })
      expect(skill.id).toMatch(ID_PATTERN("skl"))
      expect(skill.owner_project_id).toBe(projectA.id)
      expect(skill.owner_user_id).toBeNull()
      expect(skill.latest_version).toBe(1)

      const v2 = yield* client.skills.createVersion({
        params: { orgID: org.id, skillID: skill.id },
        payload: { content: content("# Deploy v2") }
      })
      expect(v2.version).toBe(2)
      expect(v2.content).toEqual({ "SKILL.md": "# Deploy v2" })
      expect(v2.size_bytes).toBe(Buffer.byteLength("# Deploy v2"))

      const got = yield* client.skills.get({ params: { orgID: org.id, skillID: skill.id } })
      expect(got.latest_version).toBe(2)

      const v1 = yield* client.skills.getVersion({ params: { orgID: org.id, skillID: skill.id, version: 1 } })
      expect(v1.content).toEqual(content("# Deploy\nRun make deploy.", { "scripts/deploy.sh": "make deploy" }))

      const firstPage = yield* client.skills.listVersions({
        params: { orgID: org.id, skillID: skill.id },
        query: { limit: 1 }
      })
      expect(firstPage.data.map((v) => v.version)).toEqual([1])
      expect(firstPage.has_more).toBe(true)
      const secondPage = yield* client.skills.listVersions({
        params: { orgID: org.id, skillID: skill.id },
        query: { limit: 1, cursor: firstPage.next_cursor! }
      })
      expect(secondPage.data.map((v) => v.version)).toEqual([2])
      expect(secondPage.has_more).toBe(false)

      const missing = yield* expectFailure(
        client.skills.getVersion({ params: { orgID: org.id, skillID: skill.id, version: 3 } })
      )
      expect(missing._tag).toBe("NotFound")

      const list = yield* client.skills.list({ params: { orgID: org.id }, query: {} })
      expect(list.data.map((s) => s.id)).toEqual([skill.id])

      yield* client.skills.remove({ params: { orgID: org.id, skillID: skill.id } })
      const gone = yield* expectFailure(client.skills.get({ params: { orgID: org.id, skillID: skill.id } }))
      expect(gone._tag).toBe("NotFound")
    }))

  it.effect("the same skill deleted in parallel: one 204, the others 404", () =>
    Effect.gen(function*() {
      const { client, org, projectA } = yield* setup
      const skill = yield* client.skills.create({
        params: { orgID: org.id },
        payload: { name: "Doomed", description: "Soon gone", owner_project_id: projectA.id, content: content("# Doomed") }
      })
      const deletes = yield* Effect.all(
        Array.from({ length: 10 }, () =>
          Effect.result(
            client.skills.remove({ params: { orgID: org.id, skillID: skill.id }, responseMode: "decoded-and-response" })
          )),
        { concurrency: "unbounded" }
      )
      const statuses = deletes.map((result) => result._tag === "Success" ? result.success[1].status : result.failure._tag)
      expect(statuses.filter((status) => status === 204)).toHaveLength(1)
      expect(statuses.filter((status) => status !== 204)).toEqual(Array(9).fill("NotFound"))
    }))

  it.effect("names are unique per owner; owner is exactly one of project or personal", () =>
    Effect.gen(function*() {
      const { client, org, projectA, projectB } = yield* setup
      const create = (payload: Record<string, unknown>) =>
        client.skills.create({
          params: { orgID: org.id },
          payload: { name: "Lint", description: "A skill", content: content("lint"), ...payload } as any
        })
      yield* create({ owner_project_id: projectA.id })
      const duplicate = yield* expectFailure(create({ owner_project_id: projectA.id }))
      expect(duplicate._tag).toBe("Conflict")
      yield* create({ owner_project_id: projectB.id })
      const personal = yield* create({ owner: "personal" })
      expect(personal.owner_project_id).toBeNull()
      expect(personal.owner_user_id).not.toBeNull()
      const both = yield* expectFailure(create({ owner: "personal", owner_project_id: projectA.id }))
      expect(both._tag).toBe("InvalidRequest")
      const neither = yield* expectFailure(create({}))
      expect(neither._tag).toBe("InvalidRequest")
    }))

  it.effect("content limits: paths, SKILL.md, size", () =>
    Effect.gen(function*() {
      const { client, org, projectA, token } = yield* setup
      const create = (c: Record<string, unknown>) =>
        client.skills.create({
          params: { orgID: org.id },
          payload: { name: "Limits", description: "A skill", owner_project_id: projectA.id, content: c as any }
        })
      const badPath = yield* expectFailure(create(content("x", { "../etc/passwd": "no", "/abs": "no", "ok.md": "ok" })))
      expect(badPath._tag).toBe("InvalidRequest")
      if (badPath._tag === "InvalidRequest") {
        expect(badPath.issues?.map((issue) => issue.path).sort()).toEqual(
          ["/content/files/~1abs", "/content/files/..~1etc~1passwd"].sort()
        )
      }
      const empty = yield* expectFailure(create(content("  \n")))
      expect(empty._tag).toBe("InvalidRequest")
      if (empty._tag === "InvalidRequest") expect(empty.issues?.[0].path).toBe("/content/SKILL.md")

      const unknownField = yield* rawRequest(
        HttpClientRequest.post(`/v1/orgs/${org.id}/skills`).pipe(
          HttpClientRequest.bearerToken(token),
          HttpClientRequest.bodyJsonUnsafe({
            name: "Limits",
            description: "A skill",
            owner_project_id: projectA.id,
            content: { "SKILL.md": "x", extra: 1 }
          })
        )
      )
      expect(unknownField.status).toBe(400)
      expect(unknownField.json?.code).toBe("invalid_request")

      const tooLarge = yield* expectFailure(create(content("x".repeat(SKILL_CONTENT_MAX_BYTES + 1))))
      expect(tooLarge._tag).toBe("RequestTooLarge")
      const justFits = yield* create(content("x".repeat(SKILL_CONTENT_MAX_BYTES)))
      expect(justFits.latest_version).toBe(1)
    }))

  it.effect("grants: create, list, delete; ownership never moves", () =>
    Effect.gen(function*() {
      const { client, org, projectA, projectB } = yield* setup
      const skill = yield* client.skills.create({
        params: { orgID: org.id },
        payload: { name: "Shared", description: "d", owner_project_id: projectA.id, content: content("s") }
      })
      const grant = yield* client.skills.createGrant({
        params: { orgID: org.id, skillID: skill.id },
        payload: { target_project_id: projectB.id }
      })
      expect(grant.id).toMatch(ID_PATTERN("sklgrant"))
      expect(grant).toMatchObject({ org_id: org.id, skill_id: skill.id, target_project_id: projectB.id })
      expect(Object.keys(grant).sort()).toEqual(["created_at", "id", "org_id", "skill_id", "target_project_id"])

      const again = yield* expectFailure(client.skills.createGrant({
        params: { orgID: org.id, skillID: skill.id },
        payload: { target_project_id: projectB.id }
      }))
      expect(again._tag).toBe("Conflict")
      const toOwner = yield* expectFailure(client.skills.createGrant({
        params: { orgID: org.id, skillID: skill.id },
        payload: { target_project_id: projectA.id }
      }))
      expect(toOwner).toMatchObject({ _tag: "Conflict", error: `Project ${projectA.id} owns skill ${skill.id}; it needs no grant` })

      const grants = yield* client.skills.listGrants({ params: { orgID: org.id, skillID: skill.id }, query: {} })
      expect(grants.data.map((g) => g.id)).toEqual([grant.id])
      const still = yield* client.skills.get({ params: { orgID: org.id, skillID: skill.id } })
      expect(still.owner_project_id).toBe(projectA.id)

      yield* client.skills.removeGrant({ params: { orgID: org.id, skillID: skill.id, grantID: grant.id } })
      const after = yield* client.skills.listGrants({ params: { orgID: org.id, skillID: skill.id }, query: {} })
      expect(after.data).toEqual([])
      const missing = yield* expectFailure(
        client.skills.removeGrant({ params: { orgID: org.id, skillID: skill.id, grantID: grant.id } })
      )
      expect(missing._tag).toBe("NotFound")
    }))

  it.effect("a grant to a project of another organization is invalid_request", () =>
    Effect.gen(function*() {
      const { client, org, projectA } = yield* setup
      const other = yield* setup
      const skill = yield* client.skills.create({
        params: { orgID: org.id },
        payload: { name: "Mine", description: "A skill", owner_project_id: projectA.id, content: content("m") }
      })
      const error = yield* expectFailure(client.skills.createGrant({
        params: { orgID: org.id, skillID: skill.id },
        payload: { target_project_id: other.projectA.id }
      }))
      expect(error._tag).toBe("InvalidRequest")
    }))

  it.effect("personal skills: seen by their owner only, deleted with the membership", () =>
    Effect.gen(function*() {
      const owner = yield* setup
      const { client, org, projectA } = owner
      const member = yield* newUser("member")
      yield* joinOrganization(owner, org.id, member, "member")
      const personal = yield* member.client.skills.create({
        params: { orgID: org.id },
        payload: { name: "Mine", description: "A skill", owner: "personal", content: content("p") }
      })
      expect(personal.owner_user_id).toBe(member.user.id)
      const hidden = yield* expectFailure(client.skills.get({ params: { orgID: org.id, skillID: personal.id } }))
      expect(hidden._tag).toBe("NotFound")
      const ownerList = yield* client.skills.list({ params: { orgID: org.id }, query: {} })
      expect(ownerList.data.map((s) => s.id)).not.toContain(personal.id)

      // A plain member cannot add versions to a project's skill they may only read.
      const projectSkill = yield* client.skills.create({
        params: { orgID: org.id },
        payload: { name: "Project", description: "A skill", owner_project_id: projectA.id, content: content("p") }
      })
      const forbidden = yield* expectFailure(member.client.skills.createVersion({
        params: { orgID: org.id, skillID: projectSkill.id },
        payload: { content: content("changed") }
      }))
      expect(forbidden._tag).toBe("Forbidden")

      yield* client.members.remove({ params: { orgID: org.id, userID: member.user.id } })
      yield* joinOrganization(owner, org.id, member, "member")
      const afterRejoin = yield* member.client.skills.list({ params: { orgID: org.id }, query: {} })
      expect(afterRejoin.data.map((s) => s.id)).toEqual([projectSkill.id])
    }))

  it.effect("another organization's skill is not found", () =>
    Effect.gen(function*() {
      const alice = yield* setup
      const bob = yield* setup
      const skill = yield* alice.client.skills.create({
        params: { orgID: alice.org.id },
        payload: { name: "Secret sauce", description: "A skill", owner_project_id: alice.projectA.id, content: content("s") }
      })
      const viaOwnOrg = yield* expectFailure(bob.client.skills.get({ params: { orgID: bob.org.id, skillID: skill.id } }))
      expect(viaOwnOrg._tag).toBe("NotFound")
      const viaOtherOrg = yield* expectFailure(
        bob.client.skills.get({ params: { orgID: alice.org.id, skillID: skill.id } })
      )
      expect(viaOtherOrg._tag).toBe("NotFound")
    }))

  it.effect("a malformed body is invalid_request with issues", () =>
    Effect.gen(function*() {
      const { token, org } = yield* setup
      const response = yield* rawRequest(
        HttpClientRequest.post(`/v1/orgs/${org.id}/skills`).pipe(
          HttpClientRequest.bearerToken(token),
          HttpClientRequest.bodyJsonUnsafe({ name: "X", description: "A skill", owner: "personal", content: { files: {} } })
        )
      )
      expect(response.status).toBe(400)
      expect(response.json?.code).toBe("invalid_request")
      expect(JSON.stringify(response.json?.issues)).toContain("/content/SKILL.md")
      // A description of nothing tells the model nothing: required to say something.
      for (const description of ["", "   "]) {
        const blank = yield* rawRequest(
          HttpClientRequest.post(`/v1/orgs/${org.id}/skills`).pipe(
            HttpClientRequest.bearerToken(token),
            HttpClientRequest.bodyJsonUnsafe({ name: "Blank", description, owner: "personal", content: { "SKILL.md": "s" } })
          )
        )
        expect(blank.status).toBe(400)
        expect(blank.json?.issues).toMatchObject([{ path: "/description", message: expect.stringContaining("must not be empty") }])
      }
    }))
})
