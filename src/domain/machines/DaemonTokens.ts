/**
 * Daemon tokens: an organization's credential for `POST /api/v1/machines/register`. A machine a
 * daemon registers with one belongs to the organization. The token is shown once, at creation;
 * deleting it revokes it at once (its daemons can no longer register or refresh their machine token).
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { DaemonTokenId, OrgId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { RequestTimestamp, Timestamp } from "../shared/Timestamp.ts"

export const CreateDaemonToken = Schema.Struct({
  name: ResourceName,
  expires_at: optional(Schema.NullOr(RequestTimestamp), {
    description: "When the token stops working; never when absent or null"
  })
})
export type CreateDaemonToken = typeof CreateDaemonToken.Type

export class DaemonToken extends Schema.Class<DaemonToken>("DaemonToken")({
  id: DaemonTokenId,
  org_id: OrgId,
  name: Schema.String,
  created_at: Timestamp,
  expires_at: Schema.NullOr(Timestamp),
  last_used_at: Schema.NullOr(Timestamp)
}) {}

export class CreatedDaemonToken extends Schema.Class<CreatedDaemonToken>("CreatedDaemonToken")({
  ...DaemonToken.fields,
  token: Schema.String.annotate({ description: "shown once; store it now" })
}) {}
