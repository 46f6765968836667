/** Projects (src/domain/tenancy/Projects.ts): org admins create and delete them, project admins rename them. */
import { Context, Effect, Layer } from "effect"
import { Conflict } from "../../domain/shared/Errors.ts"
import { type OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { AgentsRepository } from "../runtime/AgentsRepository.ts"
import { Access, projectNotFound } from "./Access.ts"
import { ProjectsRepository } from "./ProjectsRepository.ts"

const make = Effect.gen(function*() {
  const projects = yield* ProjectsRepository
  const access = yield* Access
  const ids = yield* IdGenerator
  const agents = yield* AgentsRepository
  const { transaction } = yield* Transactions

  const nameTaken = (orgId: OrgId, name: string) => () =>
    new Conflict({ error: `Organization ${orgId} has a project named "${name}" already; pick another name` })
  const create = (orgId: OrgId, name: string) =>
    Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      return yield* projects.insert({ id: yield* ids.make(ProjectId), org_id: orgId, name }).pipe(
        replaceFailure("UniqueViolation", nameTaken(orgId, name), "Debug")
      )
    })

  const list = (orgId: OrgId, query: ListQuery) =>
    Effect.andThen(
      access.orgRole(orgId),
      paged(listOf("projects", orgId), query, (keyset) => projects.page(orgId, keyset), (project) => project.id)
    )

  const get = (orgId: OrgId, projectId: ProjectId) =>
    Effect.andThen(
      access.projectAccess(orgId, projectId),
      projects.findInOrg(orgId, projectId).pipe(someOrFail(() => projectNotFound(projectId)))
    )

  const rename = (orgId: OrgId, projectId: ProjectId, name: string) =>
    Effect.andThen(
      access.requireProjectAccess(orgId, projectId, "admin"),
      projects.rename(projectId, name).pipe(
        replaceFailure("UniqueViolation", nameTaken(orgId, name), "Debug"),
        someOrFail(() => projectNotFound(projectId))
      )
    )

  /**
   * Deletes the project; of deletions of one project at once, one deletes it and the others are
   * `not_found`. In one transaction: the project's row locked against launches first, then its
   * agents, then the delete. Its agents are locked in the order every runtime transaction takes
   * first (one agent, then perhaps a share of the project's row: the foreign key check of a second
   * write of the agent's row in one transaction, as an input queued behind a turn makes): a delete
   * that held the project's row while it waited for an agent's deadlocked with such a transaction,
   * and so did one whose cascade met an agent launched after its agents were locked (a transaction
   * holding that agent waited for the project's row). The lock against launches conflicts with
   * neither that check's share nor anything a runtime transaction takes, and a launch shares the
   * row before it makes its agent: the launches under way finish first, those after wait and find
   * no project, and the agents locked are all the project has (docs/runtime.md).
   */
  const remove = (orgId: OrgId, projectId: ProjectId) =>
    Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      yield* access.projectAccess(orgId, projectId)
      const removed = yield* transaction(Effect.gen(function*() {
        if (!(yield* projects.lockForDeletion(orgId, projectId))) return false
        yield* agents.lockAllInProject(projectId)
        return yield* projects.removeInOrg(orgId, projectId)
      }))
      if (!removed) return yield* Effect.fail(projectNotFound(projectId))
    })

  return { create, list, get, rename, remove } as const
})

export class Projects extends Context.Service<Projects, Effect.Success<typeof make>>()("Projects") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ProjectsRepository.layer,
      AgentsRepository.layer,
      Access.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
