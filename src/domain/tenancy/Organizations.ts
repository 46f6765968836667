/** Organizations: the tenants; every other resource belongs to one. */
import { Schema } from "effect"
import { OrgId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"

export class Organization extends Schema.Class<Organization>("Organization")({
  id: OrgId,
  name: Schema.String,
  created_at: Timestamp
}) {}

export const OrganizationInput = Schema.Struct({ name: ResourceName })
