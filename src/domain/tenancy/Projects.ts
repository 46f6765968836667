/** Projects of an organization; names are unique within it. */
import { Schema } from "effect"
import { OrgId, ProjectId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"

export class Project extends Schema.Class<Project>("Project")({
  id: ProjectId,
  org_id: OrgId,
  name: Schema.String,
  created_at: Timestamp
}) {}

export const ProjectInput = Schema.Struct({ name: ResourceName })
