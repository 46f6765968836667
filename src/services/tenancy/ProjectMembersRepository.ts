/** The `project_members` table. */
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { ProjectId, UserId } from "../../domain/shared/Ids.ts"
import { ProjectMember, ProjectRole } from "../../domain/tenancy/ProjectMembers.ts"
import { type Keyset, keysetQuery } from "../shared/Paging.ts"
import { uniqueOrDie } from "../shared/Sql.ts"

/** A project membership as stored: a ProjectMember without the user's e-mail. */
export const ProjectMembership = Schema.Struct(Struct.omit(ProjectMember.fields, ["email"]))
export type ProjectMembership = typeof ProjectMembership.Type

const NewProjectMembership = Schema.Struct({ project_id: ProjectId, user_id: UserId, role: ProjectRole })
const ProjectMemberKey = Schema.Struct({ projectId: ProjectId, userId: UserId })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.findOne({
    Request: NewProjectMembership,
    Result: ProjectMembership,
    execute: (membership) => sql`INSERT INTO project_members ${sql.insert(membership)} RETURNING *`
  })

  const page = keysetQuery(sql, {
    filter: Schema.Struct({ projectId: ProjectId }),
    result: ProjectMembership,
    column: "user_id",
    select: ({ projectId }) => sql`SELECT * FROM project_members WHERE project_id = ${projectId}`
  })

  const remove = SqlSchema.findOneOption({
    Request: ProjectMemberKey,
    Result: Schema.Struct({ user_id: UserId }),
    execute: ({ projectId, userId }) =>
      sql`DELETE FROM project_members WHERE project_id = ${projectId} AND user_id = ${userId} RETURNING user_id`
  })

  const removeUserFrom = SqlSchema.void({
    Request: Schema.Struct({ userId: UserId, projectIds: Schema.Array(ProjectId) }),
    execute: ({ projectIds, userId }) =>
      projectIds.length === 0
        ? Effect.void
        : sql`DELETE FROM project_members WHERE user_id = ${userId} AND ${sql.in("project_id", projectIds)}`
  })

  return {
    /** Fails with UniqueViolation when the user is a member of the project already. */
    insert: (membership: typeof NewProjectMembership.Type) => uniqueOrDie(insert(membership)),
    page: (projectId: ProjectId, keyset: Keyset) => page({ projectId }, keyset),
    /** Whether there was such a membership to remove. */
    remove: (projectId: ProjectId, userId: UserId) =>
      Effect.map(Effect.orDie(remove({ projectId, userId })), Option.isSome),
    /** Ends the user's memberships of these projects. */
    removeUserFrom: (userId: UserId, projectIds: ReadonlyArray<ProjectId>) =>
      Effect.orDie(removeUserFrom({ userId, projectIds }))
  } as const
})

export class ProjectMembersRepository extends Context.Service<ProjectMembersRepository, Effect.Success<typeof make>>()("ProjectMembersRepository") {
  static readonly layer = Layer.effect(this, make)
}
