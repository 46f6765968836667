import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import {
  describeApp,
  expectFailure,
  ID_PATTERN,
  joinOrganization,
  newUser,
  outcomesAtOnce,
  rawRequest,
  type TestUser
} from "../support/TestApp.ts"

/** A new organization of `count` owners: its creator and the others, who accepted owners' invitations. */
const organizationOfOwners = (count: number) =>
  Effect.gen(function*() {
    const owners = yield* Effect.all(Array.from({ length: count }, (_, index) => newUser(`owner${index}`)))
    const org = yield* owners[0].client.organizations.create({ payload: { name: "Owners" } })
    for (const owner of owners.slice(1)) yield* joinOrganization(owners[0], org.id, owner, "owner")
    return { org, owners }
  })

/** Every owner demotes every other one to member, all at once. */
const demoteEachOther = (orgID: Parameters<TestUser["client"]["members"]["update"]>[0]["params"]["orgID"], owners: ReadonlyArray<TestUser>) =>
  outcomesAtOnce(owners.flatMap((caller) =>
    owners.filter((target) => target !== caller).map((target) =>
      caller.client.members.update({ params: { orgID, userID: target.user.id }, payload: { role: "member" } })
    )
  ))


describeApp()("members and invitations", (it) => {
  it.effect("invite, list, accept; the invitee finds it among their invitations; it is gone once accepted", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const invitee = yield* newUser("invitee")
      const org = yield* owner.client.organizations.create({ payload: { name: "Crew" } })
      const invitation = yield* owner.client.invitations.create({
        params: { orgID: org.id },
        payload: { email: invitee.user.email.toUpperCase(), role: "admin" }
      })
      expect(invitation).toMatchObject({ org_id: org.id, org_name: "Crew", org_role: "admin" })
      expect(invitation.id).toMatch(ID_PATTERN("oinv"))
      const pending = yield* owner.client.invitations.list({ params: { orgID: org.id }, query: {} })
      expect(pending.data.map((i) => i.id)).toEqual([invitation.id])

      const duplicate = yield* expectFailure(
        owner.client.invitations.create({ params: { orgID: org.id }, payload: { email: invitee.user.email, role: "member" } })
      )
      expect(duplicate._tag).toBe("Conflict")

      // The invitee finds it (with the organization's name) without being told its id.
      const mine = yield* invitee.client.invitations.listMine({ query: {} })
      expect(mine.data).toEqual([expect.objectContaining({ id: invitation.id, org_id: org.id, org_name: "Crew", org_role: "admin" })])
      const stranger = yield* newUser("stranger")
      expect((yield* stranger.client.invitations.listMine({ query: {} })).data).toEqual([])
      const notForYou = yield* expectFailure(stranger.client.invitations.accept({ params: { invitationID: invitation.id } }))
      expect(notForYou._tag).toBe("NotFound")

      const member = yield* invitee.client.invitations.accept({ params: { invitationID: invitation.id } })
      expect(member).toMatchObject({ org_id: org.id, user_id: invitee.user.id, role: "admin" })
      expect((yield* owner.client.invitations.list({ params: { orgID: org.id }, query: {} })).data).toEqual([])
      expect((yield* invitee.client.invitations.listMine({ query: {} })).data).toEqual([])
      const already = yield* expectFailure(
        owner.client.invitations.create({ params: { orgID: org.id }, payload: { email: invitee.user.email, role: "member" } })
      )
      expect(already._tag).toBe("Conflict")
    }))

  it.effect("the create body names the role role; the invitation answers it as org_role, as the contract says", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const org = yield* owner.client.organizations.create({ payload: { name: "Crew" } })
      const invite = (body: unknown) =>
        rawRequest(
          HttpClientRequest.post(`/v1/orgs/${org.id}/invitations`).pipe(
            HttpClientRequest.bearerToken(owner.token),
            HttpClientRequest.bodyJsonUnsafe(body)
          )
        )
      const created = yield* invite({ email: "named@example.test", role: "member" })
      expect(created.status).toBe(201)
      expect(Object.keys(created.json!).sort()).toEqual(["created_at", "email", "id", "org_id", "org_name", "org_role"])
      expect(created.json!.org_role).toBe("member")
      // The object's name in a create body is refused, saying which field to send.
      const mirrored = yield* invite({ email: "mirrored@example.test", org_role: "member" })
      expect(mirrored.status).toBe(400)
      expect(mirrored.json).toMatchObject({
        code: "invalid_request",
        issues: expect.arrayContaining([
          expect.objectContaining({ path: "/role", message: "is required" }),
          expect.objectContaining({ path: "/org_role", message: "is not allowed here; allowed fields: email, role" })
        ])
      })
    }))

  it.effect("invitations: delete, bad e-mail, only owners invite owners", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const admin = yield* newUser("admin")
      const org = yield* owner.client.organizations.create({ payload: { name: "Crew" } })
      yield* joinOrganization(owner, org.id, admin, "admin")
      const ownerInvite = yield* expectFailure(
        admin.client.invitations.create({ params: { orgID: org.id }, payload: { email: "x@example.test", role: "owner" } })
      )
      expect(ownerInvite._tag).toBe("Forbidden")
      const invitation = yield* admin.client.invitations.create({
        params: { orgID: org.id },
        payload: { email: "y@example.test", role: "member" }
      })
      yield* admin.client.invitations.remove({ params: { orgID: org.id, invitationID: invitation.id } })
      const gone = yield* expectFailure(
        admin.client.invitations.remove({ params: { orgID: org.id, invitationID: invitation.id } })
      )
      expect(gone._tag).toBe("NotFound")
      const badEmail = yield* expectFailure(
        owner.client.invitations.create({ params: { orgID: org.id }, payload: { email: "not an email", role: "member" } })
      )
      // Refused by the client's own encoding of the payload (Effect 3: ParseError).
      expect(badEmail._tag).toBe("SchemaError")
    }))

  it.effect("roles: admins promote and demote members, only an owner touches an owner", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const admin = yield* newUser("admin")
      const member = yield* newUser("member")
      const org = yield* owner.client.organizations.create({ payload: { name: "Roles" } })
      yield* joinOrganization(owner, org.id, admin, "admin")
      yield* joinOrganization(owner, org.id, member, "member")

      const forbidden = yield* expectFailure(
        member.client.members.update({ params: { orgID: org.id, userID: admin.user.id }, payload: { role: "member" } })
      )
      expect(forbidden._tag).toBe("Forbidden")
      const promoted = yield* admin.client.members.update({
        params: { orgID: org.id, userID: member.user.id },
        payload: { role: "admin" }
      })
      expect(promoted.role).toBe("admin")
      const demoteOwner = yield* expectFailure(
        admin.client.members.update({ params: { orgID: org.id, userID: owner.user.id }, payload: { role: "member" } })
      )
      expect(demoteOwner._tag).toBe("Forbidden")
      const removeOwner = yield* expectFailure(
        admin.client.members.remove({ params: { orgID: org.id, userID: owner.user.id } })
      )
      expect(removeOwner._tag).toBe("Forbidden")
      const list = yield* owner.client.members.list({ params: { orgID: org.id }, query: {} })
      expect(list.data.map((m) => m.role).sort()).toEqual(["admin", "admin", "owner"])
    }))

  it.effect("a member becomes an owner by accepting an owner's invitation with role owner, keeping their project memberships", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const admin = yield* newUser("admin")
      const org = yield* owner.client.organizations.create({ payload: { name: "Handover" } })
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "Main" } })
      yield* joinOrganization(owner, org.id, admin, "member")
      yield* owner.client.projectMembers.add({
        params: { orgID: org.id, projectID: project.id },
        payload: { user_id: admin.user.id, role: "admin" }
      })
      // An invitation with another role to a member is still a conflict, saying how to change a role.
      const asAdmin = yield* expectFailure(
        owner.client.invitations.create({ params: { orgID: org.id }, payload: { email: admin.user.email, role: "admin" } })
      )
      expect(asAdmin).toMatchObject({ _tag: "Conflict", error: expect.stringContaining("PATCH /orgs/{orgID}/members/{userID}") })
      const promotion = yield* owner.client.invitations.create({
        params: { orgID: org.id },
        payload: { email: admin.user.email, role: "owner" }
      })
      const promoted = yield* admin.client.invitations.accept({ params: { invitationID: promotion.id } })
      expect(promoted).toMatchObject({ org_id: org.id, user_id: admin.user.id, role: "owner" })
      const projectMembers = yield* owner.client.projectMembers.list({ params: { orgID: org.id, projectID: project.id }, query: {} })
      expect(projectMembers.data.map((member) => [member.user_id, member.role])).toContainEqual([admin.user.id, "admin"])
      // Two owners now: the first may step down.
      const demoted = yield* admin.client.members.update({ params: { orgID: org.id, userID: owner.user.id }, payload: { role: "admin" } })
      expect(demoted.role).toBe("admin")
      const again = yield* expectFailure(
        owner.client.invitations.create({ params: { orgID: org.id }, payload: { email: admin.user.email, role: "owner" } })
      )
      expect(again._tag).toBe("Forbidden")
    }))

  it.effect("the last owner can neither leave nor be demoted; with a second owner both work", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const second = yield* newUser("second")
      const org = yield* owner.client.organizations.create({ payload: { name: "Owners" } })
      const leave = yield* expectFailure(owner.client.members.remove({ params: { orgID: org.id, userID: owner.user.id } }))
      expect(leave._tag).toBe("Conflict")
      const demote = yield* expectFailure(
        owner.client.members.update({ params: { orgID: org.id, userID: owner.user.id }, payload: { role: "admin" } })
      )
      expect(demote._tag).toBe("Conflict")

      yield* joinOrganization(owner, org.id, second, "owner")
      const demoted = yield* second.client.members.update({
        params: { orgID: org.id, userID: owner.user.id },
        payload: { role: "admin" }
      })
      expect(demoted.role).toBe("admin")
      yield* owner.client.members.remove({ params: { orgID: org.id, userID: owner.user.id } })
      expect((yield* expectFailure(owner.client.organizations.get({ params: { orgID: org.id } })))._tag).toBe("NotFound")
    }))

  it.effect("a member may leave; members may not remove others; removal ends project memberships", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("owner")
      const alice = yield* newUser("alice")
      const bob = yield* newUser("bob")
      const org = yield* owner.client.organizations.create({ payload: { name: "Leaving" } })
      yield* joinOrganization(owner, org.id, alice, "member")
      yield* joinOrganization(owner, org.id, bob, "member")
      const project = yield* owner.client.projects.create({ params: { orgID: org.id }, payload: { name: "p" } })
      yield* owner.client.projectMembers.add({
        params: { orgID: org.id, projectID: project.id },
        payload: { user_id: bob.user.id }
      })

      const denied = yield* expectFailure(alice.client.members.remove({ params: { orgID: org.id, userID: bob.user.id } }))
      expect(denied._tag).toBe("Forbidden")
      yield* alice.client.members.remove({ params: { orgID: org.id, userID: alice.user.id } })
      yield* owner.client.members.remove({ params: { orgID: org.id, userID: bob.user.id } })
      const projectMembers = yield* owner.client.projectMembers.list({
        params: { orgID: org.id, projectID: project.id },
        query: {}
      })
      expect(projectMembers.data).toEqual([])
      const notMember = yield* expectFailure(owner.client.members.remove({ params: { orgID: org.id, userID: bob.user.id } }))
      expect(notMember._tag).toBe("NotFound")
    }))
  it.effect("owners demoting each other all at once: no deadlock; each answer a success, 403 or 409, and one owner left", () =>
    Effect.gen(function*() {
      // Three organizations of seven owners: on Postgres each demotion runs on its own connection.
      for (let round = 0; round < 3; round++) {
        const { org, owners } = yield* organizationOfOwners(7)
        const outcomes = yield* demoteEachOther(org.id, owners)
        expect(outcomes.filter((outcome) => !["succeeded", "Forbidden", "Conflict"].includes(outcome))).toEqual([])
        const members = yield* owners[0].client.members.list({ params: { orgID: org.id }, query: {} })
        expect(members.data.filter((member) => member.role === "owner")).toHaveLength(1)
      }
    }))
  it.effect("two owners demoting, or removing, each other at once: one succeeds, the other is refused as it would be after it", () =>
    Effect.gen(function*() {
      // Eight organizations of three owners each way, all at once: the first two of each act on each other.
      const organizations = yield* Effect.all(Array.from({ length: 16 }, () => organizationOfOwners(3)), { concurrency: 4 })
      const [demoting, removing] = [organizations.slice(0, 8), organizations.slice(8)]
      const outcomes = yield* outcomesAtOnce([
        ...demoting.flatMap(({ org, owners: [x, y] }) => [
          x.client.members.update({ params: { orgID: org.id, userID: y.user.id }, payload: { role: "member" } }),
          y.client.members.update({ params: { orgID: org.id, userID: x.user.id }, payload: { role: "member" } })
        ]),
        ...removing.flatMap(({ org, owners: [x, y] }) => [
          x.client.members.remove({ params: { orgID: org.id, userID: y.user.id } }),
          y.client.members.remove({ params: { orgID: org.id, userID: x.user.id } })
        ])
      ])
      const pairs = Array.from({ length: 16 }, (_, index) => outcomes.slice(2 * index, 2 * index + 2).sort())
      // The one demoted is no longer an owner; the one removed no longer a member (404).
      expect(pairs.slice(0, 8)).toEqual(Array(8).fill(["Forbidden", "succeeded"]))
      expect(pairs.slice(8)).toEqual(Array(8).fill(["NotFound", "succeeded"]))
      for (const { org, owners } of organizations) {
        const members = yield* owners[2].client.members.list({ params: { orgID: org.id }, query: {} })
        expect(members.data.filter((member) => member.role === "owner")).toHaveLength(2)
      }
    }))
})
