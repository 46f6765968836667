/**
 * Organization invitations (src/domain/tenancy/Invitations.ts): an admin invites an e-mail
 * address with a role (only an owner may invite an owner); the user with that e-mail accepts and
 * becomes a member. One pending invitation per address and organization.
 */
import { Context, Effect, Layer, Option } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { InvitationId, type OrgId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { Invitation } from "../../domain/tenancy/Invitations.ts"
import { Member, type OrgRole } from "../../domain/tenancy/Members.ts"
import type { Email } from "../../domain/tenancy/Users.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access } from "./Access.ts"
import { type StoredInvitation, InvitationsRepository } from "./InvitationsRepository.ts"
import { MembersRepository } from "./MembersRepository.ts"
import { OrganizationsRepository } from "./OrganizationsRepository.ts"
import { UsersRepository } from "./UsersRepository.ts"

const make = Effect.gen(function*() {
  const invitations = yield* InvitationsRepository
  const organizations = yield* OrganizationsRepository
  const members = yield* MembersRepository
  const users = yield* UsersRepository
  const access = yield* Access
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions

  const notFound = (invitationId: InvitationId) => () =>
    new NotFound({ error: `Invitation ${invitationId} not found` })

  /** Invitations of one organization with its name. */
  const named = (orgId: OrgId, stored: ReadonlyArray<StoredInvitation>) =>
    Effect.map(
      organizations.findById(orgId),
      (organization) =>
        stored.map((invitation) =>
          new Invitation({ ...invitation, org_name: Option.match(organization, { onNone: () => "", onSome: (o) => o.name }) })
        )
    )

  /** The organization role of the user with this e-mail address, if they are a member. */
  const memberRole = (orgId: OrgId, email: string) =>
    Effect.flatMap(users.findByEmail(email), Option.match({
      onNone: () => Effect.succeed(Option.none<OrgRole>()),
      onSome: (user) => Effect.map(members.find(orgId, user.id), Option.map((membership) => membership.role))
    }))

  const create = (orgId: OrgId, email: Email, role: OrgRole) =>
    Effect.gen(function*() {
      const callerRole = yield* access.requireOrgRole(orgId, "admin")
      if (role === "owner" && callerRole !== "owner") {
        return yield* Effect.fail(new Forbidden({ error: "Only an owner can invite an owner" }))
      }
      // A member becomes an owner by accepting an owner's invitation (the role an update sets is admin or member).
      const current = yield* memberRole(orgId, email)
      if (Option.isSome(current) && (role !== "owner" || current.value === "owner")) {
        return yield* Effect.fail(
          new Conflict({
            error: `${email} is a member of ${orgId} already, as ${current.value}; change an admin's or member's role ` +
              "with PATCH /orgs/{orgID}/members/{userID}, or, as an owner, invite them with role owner to make them one"
          })
        )
      }
      const stored = yield* invitations.insert({ id: yield* ids.make(InvitationId), org_id: orgId, email, role }).pipe(
        replaceFailure(
          "UniqueViolation",
          () => new Conflict({ error: `${email} has a pending invitation to ${orgId} already; delete it to invite again` }),
          "Debug"
        )
      )
      const [invitation] = yield* named(orgId, [stored])
      return invitation
    })

  const list = (orgId: OrgId, query: ListQuery) =>
    Effect.andThen(
      access.requireOrgRole(orgId, "admin"),
      paged(
        listOf("invitations", orgId),
        query,
        (keyset) => Effect.flatMap(invitations.page(orgId, keyset), (stored) => named(orgId, stored)),
        (invitation) => invitation.id
      )
    )

  const remove = (orgId: OrgId, invitationId: InvitationId) =>
    Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      if (!(yield* invitations.remove(orgId, invitationId))) return yield* Effect.fail(notFound(invitationId)())
    })

  /** The invited user joins; an invitation naming another e-mail address is not found. */
  const accept = (invitationId: InvitationId) =>
    Effect.gen(function*() {
      const userId = yield* access.requireUser
      const user = yield* users.findById(userId).pipe(someOrFail(notFound(invitationId)))
      return yield* transaction(Effect.gen(function*() {
        const invitation = yield* invitations.take(invitationId, user.email).pipe(someOrFail(notFound(invitationId)))
        const joined = yield* members.insert({ org_id: invitation.org_id, user_id: userId, role: invitation.org_role })
        if (Option.isSome(joined)) return new Member({ ...joined.value, email: user.email })
        // A member accepting an owner's invitation becomes an owner, keeping everything else.
        if (invitation.org_role !== "owner") {
          return yield* Effect.fail(new Conflict({ error: `You are a member of ${invitation.org_id} already` }))
        }
        const promoted = yield* members.updateRole(invitation.org_id, userId, "owner")
        return new Member({ ...promoted, email: user.email })
      }))
    })

  /** The calling user's pending invitations, to any organization (their e-mail address's). */
  const listMine = (query: ListQuery) =>
    Effect.gen(function*() {
      const userId = yield* access.requireUser
      const user = yield* users.findById(userId).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.die(new Error(`User ${userId} vanished`)), onSome: Effect.succeed }))
      )
      return yield* paged(
        listOf("invitations of the caller", userId),
        query,
        (keyset) => Effect.map(invitations.pageForEmail(user.email, keyset), (found) => found.map((invitation) => new Invitation(invitation))),
        (invitation) => invitation.id
      )
    })

  return { create, list, listMine, remove, accept } as const
})

export class Invitations extends Context.Service<Invitations, Effect.Success<typeof make>>()("Invitations") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      InvitationsRepository.layer,
      OrganizationsRepository.layer,
      MembersRepository.layer,
      UsersRepository.layer,
      Access.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
