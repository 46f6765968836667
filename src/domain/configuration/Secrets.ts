/**
 * Secrets (sec_): named values encrypted at rest (docs/secrets.md). The value is write-only:
 * it goes in with create and rotate, and never comes back out of the API.
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { OrgId, ProjectId, SecretGrantId, SecretId, UserId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"

/** Who a secret belongs to: the organization (managed by its admins) or one member (personal). */
export const SecretOwner = Schema.Literals(["organization", "personal"])
export type SecretOwner = typeof SecretOwner.Type

/** Largest secret value accepted, in characters. */
export const MAX_SECRET_VALUE_LENGTH = 65_536
/** Largest description accepted, in characters. */
export const MAX_DESCRIPTION_LENGTH = 1_000

/** A secret value: never echoed back, not even in a validation message. */
export const SecretValue = Schema.RedactedFromValue(
  Schema.String.pipe(
    Schema.check(Schema.isMinLength(1, { message: "must not be empty" })),
    Schema.check(Schema.isMaxLength(MAX_SECRET_VALUE_LENGTH, {
      message: `must be at most ${MAX_SECRET_VALUE_LENGTH} characters`
    }))
  ).annotate({ description: "write-only: stored encrypted, never returned" })
)

export const Description = Schema.String.pipe(
  Schema.check(Schema.isMaxLength(MAX_DESCRIPTION_LENGTH, { message: `must be at most ${MAX_DESCRIPTION_LENGTH} characters` }))
)

export class Secret extends Schema.Class<Secret>("Secret")({
  id: SecretId,
  org_id: OrgId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  owner: SecretOwner,
  owner_user_id: Schema.NullOr(UserId),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export const CreateSecret = Schema.Struct({
  name: ResourceName,
  value: SecretValue,
  description: optional(Description),
  owner: optional(SecretOwner)
})
export type CreateSecret = typeof CreateSecret.Type

export const RotateSecretValue = Schema.Struct({ value: SecretValue })

export class SecretGrant extends Schema.Class<SecretGrant>("SecretGrant")({
  id: SecretGrantId,
  org_id: OrgId,
  secret_id: SecretId,
  target_project_id: ProjectId,
  created_at: Timestamp
}) {}
