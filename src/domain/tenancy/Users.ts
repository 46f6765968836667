import { Schema } from "effect"
import { ApiKeyId, UserId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"

export const Email = Schema.Trim.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[^\s@]+@[^\s@]+$/, { message: () => "must be an e-mail address" })
).annotations({ identifier: "Email" })
export type Email = typeof Email.Type

export class User extends Schema.Class<User>("User")({
  id: UserId,
  email: Schema.String,
  created_at: Timestamp
}) {}

export const CreateApiKey = Schema.Struct({ name: ResourceName })

export class PersonalApiKey extends Schema.Class<PersonalApiKey>("PersonalApiKey")({
  id: ApiKeyId,
  name: Schema.String,
  created_at: Timestamp
}) {}

export class CreatedPersonalApiKey extends Schema.Class<CreatedPersonalApiKey>("CreatedPersonalApiKey")({
  ...PersonalApiKey.fields,
  token: Schema.String.annotations({ description: "shown once; store it now" })
}) {}
