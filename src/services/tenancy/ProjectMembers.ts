/**
 * Project membership (src/domain/tenancy/ProjectMembers.ts): organization members who work in a
 * project. Organization admins and project admins manage it; a project member must be a member
 * of the organization.
 */
import { Context, Effect, Layer } from "effect"
import { Conflict, NotFound } from "../../domain/shared/Errors.ts"
import type { OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { ProjectMember, type ProjectRole } from "../../domain/tenancy/ProjectMembers.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access, notAnOrgMember } from "./Access.ts"
import { MembersRepository } from "./MembersRepository.ts"
import { type ProjectMembership, ProjectMembersRepository } from "./ProjectMembersRepository.ts"
import { UsersRepository } from "./UsersRepository.ts"

const make = Effect.gen(function*() {
  const projectMembers = yield* ProjectMembersRepository
  const members = yield* MembersRepository
  const users = yield* UsersRepository
  const access = yield* Access
  const { transaction } = yield* Transactions

  /** Memberships with their users' e-mail addresses. */
  const withEmails = (memberships: ReadonlyArray<ProjectMembership>) =>
    Effect.map(users.findByIds(memberships.map((membership) => membership.user_id)), (found) => {
      const emails = new Map(found.map((user) => [user.id, user.email]))
      return memberships.map((membership) =>
        new ProjectMember({ ...membership, email: emails.get(membership.user_id) ?? "" })
      )
    })

  const list = (orgId: OrgId, projectId: ProjectId, query: ListQuery) =>
    Effect.andThen(
      access.projectAccess(orgId, projectId),
      paged(
        listOf("project members", projectId),
        query,
        (keyset) => Effect.flatMap(projectMembers.page(projectId, keyset), withEmails),
        (member) => member.user_id
      )
    )

  const add = (orgId: OrgId, projectId: ProjectId, userId: UserId, role: ProjectRole) =>
    Effect.gen(function*() {
      yield* access.requireProjectAccess(orgId, projectId, "admin")
      const added = yield* transaction(Effect.gen(function*() {
        yield* members.share(orgId, userId).pipe(
          someOrFail(() => notAnOrgMember(orgId, userId))
        )
        return yield* projectMembers.insert({ project_id: projectId, user_id: userId, role }).pipe(
          replaceFailure(
            "UniqueViolation",
            () => new Conflict({ error: `${userId} is a member of project ${projectId} already` }),
            "Debug"
          )
        )
      }))
      const [member] = yield* withEmails([added])
      return member
    })

  const remove = (orgId: OrgId, projectId: ProjectId, userId: UserId) =>
    Effect.gen(function*() {
      yield* access.requireProjectAccess(orgId, projectId, "admin")
      if (!(yield* projectMembers.remove(projectId, userId))) {
        return yield* Effect.fail(new NotFound({ error: `User ${userId} is not a member of project ${projectId}` }))
      }
    })

  return { list, add, remove } as const
})

export class ProjectMembers extends Context.Service<ProjectMembers, Effect.Success<typeof make>>()("ProjectMembers") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ProjectMembersRepository.layer,
      MembersRepository.layer,
      UsersRepository.layer,
      Access.layer,
      Transactions.layer
    ])
  )
}
