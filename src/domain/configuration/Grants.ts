/** The body that shares an organization resource (secret, model, skill) with a project. */
import { Schema } from "effect"
import { ProjectId } from "../shared/Ids.ts"

export const CreateGrant = Schema.Struct({ target_project_id: ProjectId }).annotations({
  parseOptions: { onExcessProperty: "error" }
})
export type CreateGrant = typeof CreateGrant.Type
