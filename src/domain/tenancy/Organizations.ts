import { Schema } from "effect"
import { ApiKeyId, InvitationId, OrgId, UserId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { Email } from "./Users.ts"

/** Organization roles, weakest first. */
export const OrgRole = Schema.Literal("member", "admin", "owner")
export type OrgRole = typeof OrgRole.Type
export const ORG_ROLE_RANK: Record<OrgRole, number> = { member: 0, admin: 1, owner: 2 }

/** The roles a member can be moved to with PATCH, and that organization API keys carry. */
export const AssignableRole = Schema.Literal("member", "admin")
export type AssignableRole = typeof AssignableRole.Type

export class Organization extends Schema.Class<Organization>("Organization")({
  id: OrgId,
  name: Schema.String,
  created_at: Timestamp
}) {}

export const OrganizationInput = Schema.Struct({ name: ResourceName })

export class Member extends Schema.Class<Member>("Member")({
  org_id: OrgId,
  user_id: UserId,
  email: Schema.String,
  role: OrgRole,
  created_at: Timestamp
}) {}

export const UpdateMember = Schema.Struct({ role: AssignableRole })

export class Invitation extends Schema.Class<Invitation>("Invitation")({
  id: InvitationId,
  org_id: OrgId,
  org_name: Schema.String,
  email: Schema.String,
  org_role: OrgRole,
  created_at: Timestamp
}) {}

export const CreateInvitation = Schema.Struct({ email: Email, role: OrgRole })

export class OrganizationApiKey extends Schema.Class<OrganizationApiKey>("OrganizationApiKey")({
  id: ApiKeyId,
  org_id: OrgId,
  name: Schema.String,
  role: AssignableRole,
  created_at: Timestamp
}) {}

export class CreatedOrganizationApiKey extends Schema.Class<CreatedOrganizationApiKey>("CreatedOrganizationApiKey")({
  ...OrganizationApiKey.fields,
  token: Schema.String.annotations({ description: "shown once; store it now" })
}) {}

export const CreateOrganizationApiKey = Schema.Struct({ name: ResourceName, role: AssignableRole })
