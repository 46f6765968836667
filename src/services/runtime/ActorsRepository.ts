/** The `actors` table: one actor per (project, external_id). */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { ActorId, OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { Actor } from "../../domain/runtime/Actors.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"

const NewActor = Schema.Struct({
  id: ActorId,
  org_id: OrgId,
  project_id: ProjectId,
  external_id: Schema.String,
  display_name: Schema.NullOr(Schema.String)
})

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.findOneOption({
    Request: NewActor,
    Result: Actor,
    execute: (actor) =>
      sql`INSERT INTO actors ${sql.insert(actor)} ON CONFLICT (project_id, external_id) DO NOTHING RETURNING *`
  })

  const findByExternalId = SqlSchema.findOneOption({
    Request: Schema.Struct({ projectId: ProjectId, externalId: Schema.String }),
    Result: Actor,
    execute: ({ externalId, projectId }) =>
      sql`SELECT * FROM actors WHERE project_id = ${projectId} AND external_id = ${externalId}`
  })

  const findInProject = SqlSchema.findOneOption({
    Request: Schema.Struct({ projectId: ProjectId, id: ActorId }),
    Result: Actor,
    execute: ({ id, projectId }) => sql`SELECT * FROM actors WHERE id = ${id} AND project_id = ${projectId}`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ projectId: ProjectId }),
    result: Actor,
    select: ({ projectId }) => sql`SELECT * FROM actors WHERE project_id = ${projectId}`
  })

  return {
    /** Adds the actor; none when the project has one with this external_id already. */
    insert: (actor: typeof NewActor.Type) => Effect.orDie(insert(actor)),
    findByExternalId: (projectId: ProjectId, externalId: string) =>
      Effect.orDie(findByExternalId({ projectId, externalId })),
    isInProject: (projectId: ProjectId, id: ActorId) =>
      Effect.map(Effect.orDie(findInProject({ projectId, id })), Option.isSome),
    page: (projectId: ProjectId, keyset: Keyset) => page({ projectId }, keyset)
  } as const
})

export class ActorsRepository extends Context.Service<ActorsRepository, Effect.Success<typeof make>>()("ActorsRepository") {
  static readonly layer = Layer.effect(this, make)
}
