/** Project members: organization members who work in a project, as admins or members. */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { ProjectId, UserId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"

/** Project roles: a project admin manages the project's members and resources. */
export const ProjectRole = Schema.Literals(["member", "admin"])
export type ProjectRole = typeof ProjectRole.Type

export class ProjectMember extends Schema.Class<ProjectMember>("ProjectMember")({
  project_id: ProjectId,
  user_id: UserId,
  email: Schema.String,
  role: ProjectRole,
  created_at: Timestamp
}) {}

export const AddProjectMember = Schema.Struct({
  user_id: UserId,
  role: optional(ProjectRole, { description: "member when omitted" })
})
