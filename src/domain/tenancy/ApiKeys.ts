/**
 * API keys: personal keys act as their user; organization keys act for their organization only,
 * with the key's role. The token is shown once, when the key is made.
 */
import { Schema } from "effect"
import { ApiKeyId, OrgId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { AssignableRole } from "./Members.ts"

const Token = Schema.String.annotate({ description: "shown once; store it now" })

export const CreateApiKey = Schema.Struct({ name: ResourceName })

export class PersonalApiKey extends Schema.Class<PersonalApiKey>("PersonalApiKey")({
  id: ApiKeyId,
  name: Schema.String,
  created_at: Timestamp
}) {}

export class CreatedPersonalApiKey extends Schema.Class<CreatedPersonalApiKey>("CreatedPersonalApiKey")({
  ...PersonalApiKey.fields,
  token: Token
}) {}

export class OrganizationApiKey extends Schema.Class<OrganizationApiKey>("OrganizationApiKey")({
  id: ApiKeyId,
  org_id: OrgId,
  name: Schema.String,
  role: AssignableRole,
  created_at: Timestamp
}) {}

export class CreatedOrganizationApiKey extends Schema.Class<CreatedOrganizationApiKey>("CreatedOrganizationApiKey")({
  ...OrganizationApiKey.fields,
  token: Token
}) {}

export const CreateOrganizationApiKey = Schema.Struct({ name: ResourceName, role: AssignableRole })
