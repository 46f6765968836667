/**
 * Actors (src/domain/runtime/Actors.ts): the external users a project attributes inputs to. One
 * actor per (project, external_id): creating it again returns the existing one.
 */
import { Context, Effect, Layer, Option } from "effect"
import { InvalidRequest } from "../../domain/shared/Errors.ts"
import { ActorId, type OrgId, type ProjectId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Access } from "../tenancy/Access.ts"
import { ActorsRepository } from "./ActorsRepository.ts"

const make = Effect.gen(function*() {
  const actors = yield* ActorsRepository
  const access = yield* Access
  const ids = yield* IdGenerator

  /** The actor of `external_id` in the project, and whether this request made it (201) or found it (200). */
  const create = (
    orgId: OrgId,
    projectId: ProjectId,
    input: { readonly external_id: string; readonly display_name?: string | undefined }
  ) =>
    Effect.gen(function*() {
      yield* access.requireProjectAccess(orgId, projectId, "write")
      const inserted = yield* actors.insert({
        id: yield* ids.make(ActorId),
        org_id: orgId,
        project_id: projectId,
        external_id: input.external_id,
        display_name: input.display_name ?? null
      })
      if (Option.isSome(inserted)) return { actor: inserted.value, created: true }
      const existing = yield* actors.findByExternalId(projectId, input.external_id).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.die(new Error(`The actor ${input.external_id} of project ${projectId} vanished`)),
          onSome: Effect.succeed
        }))
      )
      return { actor: existing, created: false }
    })

  const list = (orgId: OrgId, projectId: ProjectId, query: ListQuery) =>
    Effect.andThen(
      access.projectAccess(orgId, projectId),
      paged(listOf("actors", projectId), query, (keyset) => actors.page(projectId, keyset), (actor) => actor.id)
    )

  /** Fails with `invalid_request` at `field` unless `actorId` is an actor of the project. */
  const requireInProject = (projectId: ProjectId, actorId: ActorId, field: string) =>
    Effect.flatMap(actors.isInProject(projectId, actorId), (found) =>
      found
        ? Effect.void
        : Effect.fail(
          new InvalidRequest({
            error: `${field}: ${actorId} is not an actor of project ${projectId}; create it with POST /actors first`,
            issues: [{ path: field, message: "not an actor of this project" }]
          })
        ))

  return { create, list, requireInProject } as const
})

export class Actors extends Context.Service<Actors, Effect.Success<typeof make>>()("Actors") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ActorsRepository.layer,
      Access.layer,
      IdGenerator.layer
    ])
  )
}
