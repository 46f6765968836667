/**
 * Grants share an organization resource (a secret, a model, a skill) with one of its projects.
 * Each grantable resource has a grant class of the same shape: `id`, `org_id`, the resource's id
 * under its own name (`secret_id`), `target_project_id`, `created_at`.
 */
import { Schema } from "effect"
import { ProjectId } from "../shared/Ids.ts"

export const CreateGrant = Schema.Struct({ target_project_id: ProjectId })
export type CreateGrant = typeof CreateGrant.Type
