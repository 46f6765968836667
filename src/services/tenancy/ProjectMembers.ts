/**
 * Project membership: organization members who work in a project. Organization admins and
 * project admins manage it; a project member must be a member of the organization.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Conflict, NotFound } from "../../domain/shared/Errors.ts"
import type { OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { toPage } from "../../domain/shared/Pagination.ts"
import { ProjectMember, type ProjectRole } from "../../domain/tenancy/Projects.ts"
import { Access } from "./Access.ts"
import { pageRequest } from "../shared/Paging.ts"
import { firstOr, onDuplicate } from "../shared/Sql.ts"

interface ProjectMemberRow {
  readonly project_id: ProjectId
  readonly user_id: UserId
  readonly email: string
  readonly role: ProjectRole
  readonly created_at: Date
}

const toProjectMember = (row: ProjectMemberRow) => new ProjectMember(row, { disableValidation: true })

export class ProjectMembers extends Effect.Service<ProjectMembers>()("ProjectMembers", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access

    const list = (orgId: OrgId, projectId: ProjectId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* access.projectAccess(orgId, projectId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<ProjectMemberRow>`
          SELECT pm.project_id, pm.user_id, u.email, pm.role, pm.created_at
          FROM project_members pm JOIN users u ON u.id = pm.user_id
          WHERE pm.project_id = ${projectId} ${after === undefined ? sql`` : sql`AND pm.user_id > ${after}`}
          ORDER BY pm.user_id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toProjectMember), limit, (member) => member.user_id)
      })

    const add = (orgId: OrgId, projectId: ProjectId, userId: UserId, role: ProjectRole) =>
      Effect.gen(function*() {
        yield* access.requireProjectAccess(orgId, projectId, "admin")
        const rows = yield* sql<ProjectMemberRow>`
          INSERT INTO project_members (project_id, user_id, role)
          SELECT ${projectId}, m.user_id, ${role} FROM org_members m
          WHERE m.org_id = ${orgId} AND m.user_id = ${userId}
          RETURNING project_id, user_id, role, created_at,
            (SELECT email FROM users WHERE id = user_id) AS email`.pipe(
          onDuplicate(() => new Conflict({ error: `${userId} is a member of project ${projectId} already` }))
        )
        return toProjectMember(
          yield* firstOr(() => new NotFound({ error: `User ${userId} is not a member of organization ${orgId}` }))(rows)
        )
      })

    const remove = (orgId: OrgId, projectId: ProjectId, userId: UserId) =>
      Effect.gen(function*() {
        yield* access.requireProjectAccess(orgId, projectId, "admin")
        const rows = yield* sql`
          DELETE FROM project_members WHERE project_id = ${projectId} AND user_id = ${userId}
          RETURNING user_id`.pipe(Effect.orDie)
        yield* firstOr(() => new NotFound({ error: `User ${userId} is not a member of project ${projectId}` }))(rows)
      })

    return { list, add, remove } as const
  })
}) {}
