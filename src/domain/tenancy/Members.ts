/** Organization members and their roles. */
import { Schema } from "effect"
import { OrgId, UserId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"

/** Organization roles, weakest first. */
export const OrgRole = Schema.Literals(["member", "admin", "owner"])
export type OrgRole = typeof OrgRole.Type
export const ORG_ROLE_RANK: Record<OrgRole, number> = { member: 0, admin: 1, owner: 2 }

/** The roles a member can be moved to with PATCH, and that organization API keys carry. */
export const AssignableRole = Schema.Literals(["member", "admin"])
export type AssignableRole = typeof AssignableRole.Type

export class Member extends Schema.Class<Member>("Member")({
  org_id: OrgId,
  user_id: UserId,
  email: Schema.String,
  role: OrgRole,
  created_at: Timestamp
}) {}

export const UpdateMember = Schema.Struct({ role: AssignableRole })
