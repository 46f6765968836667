import { Schema } from "effect"
import { OrgId, ProjectId, UserId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"

export class Project extends Schema.Class<Project>("Project")({
  id: ProjectId,
  org_id: OrgId,
  name: Schema.String,
  created_at: Timestamp
}) {}

export const ProjectInput = Schema.Struct({ name: ResourceName })

/** Project roles: a project admin manages the project's members and resources. */
export const ProjectRole = Schema.Literal("member", "admin")
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
  role: Schema.optional(ProjectRole).annotations({ description: "member when omitted" })
})
