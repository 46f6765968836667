/**
 * Actors: the external users a project attributes inputs to (docs/agents-api.md). One actor per
 * (project, external_id): creating it again returns the existing one.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { InvalidRequest } from "../../domain/shared/Errors.ts"
import { ActorId, type OrgId, type ProjectId } from "../../domain/shared/Ids.ts"
import { type ListQuery, toPage } from "../../domain/shared/Pagination.ts"
import { Actor } from "../../domain/runtime/Resources.ts"
import { Access } from "../tenancy/Access.ts"
import { pageRequest } from "../shared/Paging.ts"

interface ActorRow {
  readonly id: ActorId
  readonly org_id: OrgId
  readonly project_id: ProjectId
  readonly external_id: string
  readonly display_name: string | null
  readonly created_at: Date
}

export class Actors extends Effect.Service<Actors>()("Actors", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access

    /** The actor of `external_id` in the project, and whether this request made it (201) or found it (200). */
    const create = (
      orgId: OrgId,
      projectId: ProjectId,
      input: { readonly external_id: string; readonly display_name?: string | undefined }
    ) =>
      Effect.gen(function*() {
        yield* access.requireProjectAccess(orgId, projectId, "write")
        const inserted = yield* sql<ActorRow>`
          INSERT INTO actors (id, org_id, project_id, external_id, display_name)
          VALUES (${ActorId.make()}, ${orgId}, ${projectId}, ${input.external_id}, ${input.display_name ?? null})
          ON CONFLICT (project_id, external_id) DO NOTHING
          RETURNING *`
        if (inserted.length > 0) return { actor: new Actor(inserted[0]), created: true }
        const [existing] = yield* sql<ActorRow>`
          SELECT * FROM actors WHERE project_id = ${projectId} AND external_id = ${input.external_id}`
        return { actor: new Actor(existing), created: false }
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const list = (orgId: OrgId, projectId: ProjectId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* access.projectAccess(orgId, projectId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<ActorRow>`
          SELECT * FROM actors
          WHERE project_id = ${projectId} ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map((row) => new Actor(row)), limit, (actor) => actor.id)
      })

    /** Fails with `invalid_request` at `field` unless `actorId` is an actor of the project. */
    const requireInProject = (projectId: ProjectId, actorId: ActorId, field: string) =>
      sql<{ id: ActorId }>`SELECT id FROM actors WHERE id = ${actorId} AND project_id = ${projectId}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows.length > 0
            ? Effect.void
            : Effect.fail(
              new InvalidRequest({
                error: `${field}: ${actorId} is not an actor of project ${projectId}; create it with POST /actors first`,
                issues: [{ path: field, message: "not an actor of this project" }]
              })
            )
        )
      )

    return { create, list, requireInProject } as const
  })
}) {}
