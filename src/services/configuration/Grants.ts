/**
 * Sharing a resource with a project of its organization, the same way for every grantable
 * resource (secrets, models, skills). Who may grant stays with each resource's service, which
 * checks it and then calls these with its grants repository.
 */
import { Context, Effect, Layer } from "effect"
import type { CreateGrant } from "../../domain/configuration/Grants.ts"
import { Conflict, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import type { OrgId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { ProjectsRepository } from "../tenancy/ProjectsRepository.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import type { GrantsRepository } from "./GrantsRepository.ts"

const make = Effect.gen(function*() {
  const projects = yield* ProjectsRepository
  const ids = yield* IdGenerator

  /** Grants the resource to `input.target_project_id`, which must be a project of the organization. */
  const create = <ResourceId extends string, GrantId extends string, Grant>(
    grants: GrantsRepository<ResourceId, GrantId, Grant>,
    orgId: OrgId,
    resourceId: ResourceId,
    input: CreateGrant
  ) =>
    Effect.gen(function*() {
      const target = input.target_project_id
      yield* projects.findInOrg(orgId, target).pipe(
        someOrFail(() =>
          new InvalidRequest({
            error: `Project ${target} is not a project of organization ${orgId}; grant to one of its projects`,
            issues: [{ path: "/target_project_id", message: "no such project in this organization" }]
          })
        )
      )
      return yield* grants.insert({
        id: yield* ids.make(grants.grantId),
        org_id: orgId,
        resource_id: resourceId,
        target_project_id: target
      }).pipe(
        replaceFailure(
          "UniqueViolation",
          () => new Conflict({ error: `${grants.label} ${resourceId} is granted to project ${target} already` }),
          "Debug"
        )
      )
    })

  const list = <ResourceId extends string, GrantId extends string, Grant extends { readonly id: GrantId }>(
    grants: GrantsRepository<ResourceId, GrantId, Grant>,
    resourceId: ResourceId,
    query: ListQuery
  ) => paged(listOf("grants", resourceId), query, (keyset) => grants.page(resourceId, keyset), (grant) => grant.id)

  const remove = <ResourceId extends string, GrantId extends string, Grant>(
    grants: GrantsRepository<ResourceId, GrantId, Grant>,
    resourceId: ResourceId,
    grantId: GrantId
  ) =>
    Effect.flatMap(grants.remove(resourceId, grantId), (removed) =>
      removed
        ? Effect.void
        : Effect.fail(
          new NotFound({ error: `Grant ${grantId} of ${grants.label.toLowerCase()} ${resourceId} not found` })
        ))

  return { create, list, remove } as const
})

export class Grants extends Context.Service<Grants, Effect.Success<typeof make>>()("Grants") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ProjectsRepository.layer,
      IdGenerator.layer
    ])
  )
}
