/**
 * Sharing a resource with a project of its organization, the same way for every grantable
 * resource (secrets, models, skills, machines, machine pools). Who may grant stays with each
 * resource's service, which gives its checks and its grants repository to `operations`.
 */
import { Context, Effect, Layer } from "effect"
import type { CreateGrant } from "../../domain/configuration/Grants.ts"
import { Conflict, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import type { OrgId, ProjectId } from "../../domain/shared/Ids.ts"
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

  /**
   * A resource's grant operations: a grant is made or removed once `grantable` passes (the caller
   * may change the resource's grants; a resource that is not granted to projects fails it), never
   * to the project that owns the resource (`ownerProjectOf`, a project's skill), which needs none;
   * the grants are listed once `visible` passes.
   */
  const operations = <
    ResourceId extends string,
    GrantId extends string,
    Grant extends { readonly id: GrantId },
    Resource,
    GrantableError,
    GrantableContext,
    VisibleError,
    VisibleContext
  >(
    grants: GrantsRepository<ResourceId, GrantId, Grant>,
    checks: {
      readonly grantable: (orgId: OrgId, resourceId: ResourceId) => Effect.Effect<Resource, GrantableError, GrantableContext>
      readonly visible: (orgId: OrgId, resourceId: ResourceId) => Effect.Effect<unknown, VisibleError, VisibleContext>
      readonly ownerProjectOf?: (resource: Resource) => ProjectId | null
    }
  ) => ({
    createGrant: (orgId: OrgId, resourceId: ResourceId, input: CreateGrant) =>
      Effect.flatMap(checks.grantable(orgId, resourceId), (resource) =>
        checks.ownerProjectOf?.(resource) === input.target_project_id
          ? Effect.fail(
            new Conflict({
              error: `Project ${input.target_project_id} owns ${grants.label.toLowerCase()} ${resourceId}; it needs no grant`
            })
          )
          : create(grants, orgId, resourceId, input)),
    listGrants: (orgId: OrgId, resourceId: ResourceId, query: ListQuery) =>
      Effect.andThen(checks.visible(orgId, resourceId), list(grants, resourceId, query)),
    removeGrant: (orgId: OrgId, resourceId: ResourceId, grantId: GrantId) =>
      Effect.andThen(checks.grantable(orgId, resourceId), remove(grants, resourceId, grantId))
  })

  return { operations } as const
})

/**
 * The refusal to grant a personal resource (a secret, a machine): its owner uses it in every
 * project of the organization.
 */
export const personalNotGranted = (label: string, resourceId: string) =>
  new InvalidRequest({
    error: `${label} ${resourceId} is a personal ${label.toLowerCase()}: it is usable by its owner in every project of ` +
      `the organization and is not granted to projects`
  })

export class Grants extends Context.Service<Grants, Effect.Success<typeof make>>()("Grants") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ProjectsRepository.layer,
      IdGenerator.layer
    ])
  )
}
