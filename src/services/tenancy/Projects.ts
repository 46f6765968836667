import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Conflict, NotFound } from "../../domain/shared/Errors.ts"
import { type OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { toPage } from "../../domain/shared/Pagination.ts"
import { Project } from "../../domain/tenancy/Projects.ts"
import { Access } from "./Access.ts"
import { pageRequest } from "../shared/Paging.ts"
import { firstOr, onDuplicate } from "../shared/Sql.ts"

interface ProjectRow {
  readonly id: ProjectId
  readonly org_id: OrgId
  readonly name: string
  readonly created_at: Date
}

const toProject = (row: ProjectRow) => new Project(row, { disableValidation: true })
const nameTaken = (orgId: OrgId, name: string) => () =>
  new Conflict({ error: `Organization ${orgId} has a project named "${name}" already; pick another name` })
const notFound = (projectId: ProjectId) => () => new NotFound({ error: `Project ${projectId} not found` })

export class Projects extends Effect.Service<Projects>()("Projects", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access

    const create = (orgId: OrgId, name: string) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        const rows = yield* sql<ProjectRow>`
          INSERT INTO projects ${sql.insert({ id: ProjectId.make(), org_id: orgId, name })}
          RETURNING id, org_id, name, created_at`.pipe(onDuplicate(nameTaken(orgId, name)))
        return toProject(rows[0])
      })

    const list = (orgId: OrgId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* access.orgRole(orgId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<ProjectRow>`
          SELECT id, org_id, name, created_at FROM projects
          WHERE org_id = ${orgId} ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toProject), limit, (project) => project.id)
      })

    const get = (orgId: OrgId, projectId: ProjectId) =>
      Effect.gen(function*() {
        yield* access.projectAccess(orgId, projectId)
        const rows = yield* sql<ProjectRow>`
          SELECT id, org_id, name, created_at FROM projects WHERE id = ${projectId}`.pipe(Effect.orDie)
        return toProject(yield* firstOr(notFound(projectId))(rows))
      })

    const rename = (orgId: OrgId, projectId: ProjectId, name: string) =>
      Effect.gen(function*() {
        yield* access.requireProjectAccess(orgId, projectId, "admin")
        const rows = yield* sql<ProjectRow>`
          UPDATE projects SET name = ${name} WHERE id = ${projectId}
          RETURNING id, org_id, name, created_at`.pipe(onDuplicate(nameTaken(orgId, name)))
        return toProject(yield* firstOr(notFound(projectId))(rows))
      })

    const remove = (orgId: OrgId, projectId: ProjectId) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        yield* access.projectAccess(orgId, projectId)
        yield* sql`DELETE FROM projects WHERE id = ${projectId}`.pipe(Effect.orDie)
      })

    return { create, list, get, rename, remove } as const
  })
}) {}
