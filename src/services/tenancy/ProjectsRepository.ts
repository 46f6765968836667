/** The `projects` table. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { Project } from "../../domain/tenancy/Projects.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { uniqueOrDie } from "../shared/Sql.ts"

const NewProject = Schema.Struct({ id: ProjectId, org_id: OrgId, name: Schema.String })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.findOne({
    Request: NewProject,
    Result: Project,
    execute: (project) => sql`INSERT INTO projects ${sql.insert(project)} RETURNING *`
  })

  const findInOrg = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgId: OrgId, projectId: ProjectId }),
    Result: Project,
    execute: ({ orgId, projectId }) => sql`SELECT * FROM projects WHERE id = ${projectId} AND org_id = ${orgId}`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ orgId: OrgId }),
    result: Project,
    select: ({ orgId }) => sql`SELECT * FROM projects WHERE org_id = ${orgId}`
  })

  const idsOf = SqlSchema.findAll({
    Request: OrgId,
    Result: Schema.Struct({ id: ProjectId }),
    execute: (orgId) => sql`SELECT id FROM projects WHERE org_id = ${orgId}`
  })

  const rename = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: ProjectId, name: Schema.String }),
    Result: Project,
    execute: ({ id, name }) => sql`UPDATE projects SET name = ${name} WHERE id = ${id} RETURNING *`
  })

  const removeInOrg = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgId: OrgId, projectId: ProjectId }),
    Result: Schema.Struct({ id: ProjectId }),
    execute: ({ orgId, projectId }) => sql`DELETE FROM projects WHERE id = ${projectId} AND org_id = ${orgId} RETURNING id`
  })

  return {
    /** Fails with UniqueViolation when the organization has a project of that name. */
    insert: (project: typeof NewProject.Type) => uniqueOrDie(insert(project)),
    /** The project, when it belongs to the organization. */
    findInOrg: (orgId: OrgId, projectId: ProjectId) => Effect.orDie(findInOrg({ orgId, projectId })),
    page: (orgId: OrgId, keyset: Keyset) => page({ orgId }, keyset),
    idsOf: (orgId: OrgId) => Effect.map(Effect.orDie(idsOf(orgId)), (rows) => rows.map((row) => row.id)),
    /** Fails with UniqueViolation when the organization has a project of that name. */
    rename: (id: ProjectId, name: string) => uniqueOrDie(rename({ id, name })),
    /** Deletes the project of the organization; whether there was such a project to delete. */
    removeInOrg: (orgId: OrgId, projectId: ProjectId) =>
      Effect.map(Effect.orDie(removeInOrg({ orgId, projectId })), Option.isSome)
  } as const
})

export class ProjectsRepository extends Context.Service<ProjectsRepository, Effect.Success<typeof make>>()("ProjectsRepository") {
  static readonly layer = Layer.effect(this, make)
}
