/** Invitations to an organization, accepted by the user whose e-mail they name. */
import { Schema } from "effect"
import { InvitationId, OrgId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { OrgRole } from "./Members.ts"
import { Email } from "./Users.ts"

export class Invitation extends Schema.Class<Invitation>("Invitation")({
  id: InvitationId,
  org_id: OrgId,
  org_name: Schema.String,
  email: Schema.String,
  org_role: OrgRole,
  created_at: Timestamp
}) {}

export const CreateInvitation = Schema.Struct({ email: Email, role: OrgRole })
