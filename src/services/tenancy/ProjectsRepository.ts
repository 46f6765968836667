/** The `projects` table. */
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
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

  const lockForDeletion = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgId: OrgId, projectId: ProjectId }),
    Result: Schema.Struct({ id: ProjectId }),
    execute: ({ orgId, projectId }) =>
      sql`SELECT id FROM projects WHERE id = ${projectId} AND org_id = ${orgId} FOR NO KEY UPDATE`
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
    /**
     * The project's row locked against launches (`shareForLaunch`) until the transaction ends: what a deletion of the project takes first, so that no agent is
     * made in the project after it has locked the project's agents (Projects.remove). Neither lock
     * conflicts with the share of the row a foreign key check takes (FOR KEY SHARE: a runtime
     * transaction's second write of its agent's row), so a deletion holding it never waits for
     * such a transaction. Whether the project is in the organization.
     */
    /**
     * The statement that shares the project's row, if it is in the organization, until the
     * transaction ends (FOR SHARE): what a launch's insert of its agent runs first, before any
     * other lock on the row (AgentsRepository.insert). A deletion of the project
     * (`lockForDeletion`) waits for the launches under way, and a launch that comes after it
     * waits for it and finds no project (docs/runtime.md, "Durability design").
     */
    shareForLaunch: (orgId: OrgId, projectId: ProjectId): Statement.Fragment =>
      sql`SELECT id FROM projects WHERE id = ${projectId} AND org_id = ${orgId} FOR SHARE`,
    lockForDeletion: (orgId: OrgId, projectId: ProjectId) =>
      Effect.map(Effect.orDie(lockForDeletion({ orgId, projectId })), Option.isSome),
    /** Deletes the project of the organization; whether there was such a project to delete. */
    removeInOrg: (orgId: OrgId, projectId: ProjectId) =>
      Effect.map(Effect.orDie(removeInOrg({ orgId, projectId })), Option.isSome)
  } as const
})

export class ProjectsRepository extends Context.Service<ProjectsRepository, Effect.Success<typeof make>>()("ProjectsRepository") {
  static readonly layer = Layer.effect(this, make)
}
