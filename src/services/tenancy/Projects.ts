/** Projects (src/domain/tenancy/Projects.ts): org admins create and delete them, project admins rename them. */
import { Context, Effect, Layer } from "effect"
import { Conflict, NotFound } from "../../domain/shared/Errors.ts"
import { type OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Access } from "./Access.ts"
import { ProjectsRepository } from "./ProjectsRepository.ts"

const make = Effect.gen(function*() {
  const projects = yield* ProjectsRepository
  const access = yield* Access
  const ids = yield* IdGenerator

  const nameTaken = (orgId: OrgId, name: string) => () =>
    new Conflict({ error: `Organization ${orgId} has a project named "${name}" already; pick another name` })
  const notFound = (projectId: ProjectId) => () => new NotFound({ error: `Project ${projectId} not found` })

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
      projects.findInOrg(orgId, projectId).pipe(someOrFail(notFound(projectId)))
    )

  const rename = (orgId: OrgId, projectId: ProjectId, name: string) =>
    Effect.andThen(
      access.requireProjectAccess(orgId, projectId, "admin"),
      projects.rename(projectId, name).pipe(
        replaceFailure("UniqueViolation", nameTaken(orgId, name), "Debug"),
        someOrFail(notFound(projectId))
      )
    )

  /** Deletes the project; of deletions of one project at once, one deletes it and the others are `not_found`. */
  const remove = (orgId: OrgId, projectId: ProjectId) =>
    Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      yield* access.projectAccess(orgId, projectId)
      if (!(yield* projects.removeInOrg(orgId, projectId))) return yield* Effect.fail(notFound(projectId)())
    })

  return { create, list, get, rename, remove } as const
})

export class Projects extends Context.Service<Projects, Effect.Success<typeof make>>()("Projects") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ProjectsRepository.layer,
      Access.layer,
      IdGenerator.layer
    ])
  )
}
