/**
 * Organization members (src/domain/tenancy/Members.ts). Admins change roles and remove members,
 * only an owner changes an owner, the last owner stays, and a member leaves of their own accord.
 * Removal also ends the user's project memberships in the organization, and is refused while
 * something the member owns personally is in use: a personal secret that a resource
 * holds (SecretReferences), a personal skill an agent's configuration uses (SkillReferences).
 */
import { Context, Effect, Layer } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import type { OrgId, UserId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { type AssignableRole, Member, ORG_ROLE_RANK, type OrgRole } from "../../domain/tenancy/Members.ts"
import { CurrentPrincipal } from "../../domain/tenancy/Principal.ts"
import { someOrFail } from "../shared/Failures.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { SecretReferences } from "../configuration/SecretReferences.ts"
import { SkillReferences } from "../configuration/SkillReferences.ts"
import { Access, notAnOrgMember, orgNotFound, type RoleRead } from "./Access.ts"
import { type Membership, MembersRepository } from "./MembersRepository.ts"
import { OrganizationsRepository } from "./OrganizationsRepository.ts"
import { ProjectMembersRepository } from "./ProjectMembersRepository.ts"
import { ProjectsRepository } from "./ProjectsRepository.ts"
import { UsersRepository } from "./UsersRepository.ts"

const make = Effect.gen(function*() {
  const members = yield* MembersRepository
  const organizations = yield* OrganizationsRepository
  const users = yield* UsersRepository
  const projects = yield* ProjectsRepository
  const projectMembers = yield* ProjectMembersRepository
  const access = yield* Access
  const secretReferences = yield* SecretReferences
  const skillReferences = yield* SkillReferences
  const { transaction } = yield* Transactions

  /** Memberships with their users' e-mail addresses. */
  const withEmails = (memberships: ReadonlyArray<Membership>) =>
    Effect.map(users.findByIds(memberships.map((membership) => membership.user_id)), (found) => {
      const emails = new Map(found.map((user) => [user.id, user.email]))
      return memberships.map((membership) => new Member({ ...membership, email: emails.get(membership.user_id) ?? "" }))
    })

  const list = (orgId: OrgId, query: ListQuery) =>
    Effect.gen(function*() {
      yield* access.orgRole(orgId)
      return yield* paged(
        listOf("members", orgId),
        query,
        (keyset) => Effect.flatMap(members.page(orgId, keyset), withEmails),
        (member) => member.user_id
      )
    })

  /**
   * A change to the membership of `userId`, in a transaction, when `authorize` allows the caller
   * (it answers the caller's role). `change` gets that role, the membership, locked, and the
   * organization's owner count.
   *
   * The organization's row is locked first: every role change and removal in the organization
   * takes that lock before any member's row, so they run one after another and cannot deadlock.
   * (Locking the owners' rows, then the target's, took them in different orders once a target
   * had stopped being an owner: owners demoting each other at once deadlocked, 500.) What is read
   * next is read by statements begun under that lock, so it holds every change made before.
   *
   * The caller is authorized twice: on its role as read with its key, so that a caller refused
   * takes no lock, then on its role as stored under the lock, which is what `change` decides on.
   * The first may be stale by then: two owners demoting each other at once were both allowed,
   * and neither was an owner afterwards, where one after the other the second is refused.
   */
  const changeMembership = <A, E, R>(
    orgId: OrgId,
    userId: UserId,
    authorize: (read: RoleRead) => Effect.Effect<OrgRole, NotFound | Forbidden, CurrentPrincipal>,
    change: (locked: { readonly callerRole: OrgRole; readonly target: Membership; readonly ownerCount: number }) => Effect.Effect<A, E, R>
  ) =>
    Effect.andThen(
      authorize("authenticated"),
      transaction(Effect.gen(function*() {
        yield* organizations.lock(orgId).pipe(someOrFail(() => orgNotFound(orgId)))
        const callerRole = yield* authorize("current")
        // Locked as well: accepting an owner's invitation changes a member's role without the organization's lock.
        const target = yield* members.lock(orgId, userId).pipe(
          someOrFail(() => notAnOrgMember(orgId, userId))
        )
        return yield* change({ callerRole, target, ownerCount: yield* members.countOwners(orgId) })
      }))
    )

  /** Any member may leave; removing another takes an admin or an owner. */
  const requireRemover = (callerRole: OrgRole, leaving: boolean) =>
    !leaving && ORG_ROLE_RANK[callerRole] < ORG_ROLE_RANK.admin
      ? Effect.fail(new Forbidden({ error: "Only admins and owners can remove other members" }))
      : Effect.void

  const requireOwnerToChangeOwner = (callerRole: OrgRole, target: Membership, action: string) =>
    target.role === "owner" && callerRole !== "owner"
      ? Effect.fail(new Forbidden({ error: `Only an owner can ${action} an owner` }))
      : Effect.void

  const refuseLastOwner = (target: Membership, ownerCount: number, action: string) =>
    target.role === "owner" && ownerCount <= 1
      ? Effect.fail(
        new Conflict({
          error: `${target.user_id} is the last owner of ${target.org_id}; make another owner before you ${action} them`
        })
      )
      : Effect.void

  const updateRole = (orgId: OrgId, userId: UserId, role: AssignableRole) =>
    Effect.gen(function*() {
      const updated = yield* changeMembership(
        orgId,
        userId,
        (read) => access.requireOrgRole(orgId, "admin", read),
        ({ callerRole, ownerCount, target }) =>
          Effect.gen(function*() {
            yield* requireOwnerToChangeOwner(callerRole, target, "demote")
            yield* refuseLastOwner(target, ownerCount, "demote")
            return yield* members.updateRole(orgId, userId, role)
          })
      )
      const [member] = yield* withEmails([updated])
      return member
    })

  const remove = (orgId: OrgId, userId: UserId) =>
    Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      const leaving = principal.kind === "user" && principal.userId === userId
      yield* changeMembership(
        orgId,
        userId,
        (read) => Effect.tap(access.orgRole(orgId, read), (callerRole) => requireRemover(callerRole, leaving)),
        ({ callerRole, ownerCount, target }) =>
          Effect.gen(function*() {
            yield* requireOwnerToChangeOwner(callerRole, target, "remove")
            yield* refuseLastOwner(target, ownerCount, "remove")
            const blockers = [
              ...yield* secretReferences.memberRemovalBlockers(orgId, userId),
              ...yield* skillReferences.memberRemovalBlockers(orgId, userId)
            ]
            if (blockers.length > 0) {
              return yield* Effect.fail(
                new Conflict({ error: `${userId} cannot be removed from ${orgId}: ${blockers.join("; ")}` })
              )
            }
            yield* projectMembers.removeUserFrom(userId, yield* projects.idsOf(orgId))
            yield* members.remove(orgId, userId)
          })
      )
    })

  return { list, updateRole, remove } as const
})

export class Members extends Context.Service<Members, Effect.Success<typeof make>>()("Members") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MembersRepository.layer,
      OrganizationsRepository.layer,
      UsersRepository.layer,
      ProjectsRepository.layer,
      ProjectMembersRepository.layer,
      Access.layer,
      SecretReferences.layer,
      SkillReferences.layer,
      Transactions.layer
    ])
  )
}
