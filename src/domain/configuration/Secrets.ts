/**
 * Secrets (sec_): named values encrypted at rest (docs/secrets.md). The value is write-only:
 * it goes in with create and rotate, and never comes back out of the API.
 */
import { Schema } from "effect"
import { OrgId, ProjectId, SecretGrantId, SecretId, UserId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"

/** Who a secret belongs to: the organization (managed by its admins) or one member (personal). */
export const SecretOwner = Schema.Literal("organization", "personal")
export type SecretOwner = typeof SecretOwner.Type

/** Largest secret value accepted, in characters. */
export const MAX_SECRET_VALUE_LENGTH = 65_536
/** Largest description accepted, in characters. */
export const MAX_DESCRIPTION_LENGTH = 1_000

/** A secret value: never echoed back, not even in a validation message. */
export const SecretValue = Schema.Redacted(
  Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(MAX_SECRET_VALUE_LENGTH, {
      message: () => `must be at most ${MAX_SECRET_VALUE_LENGTH} characters`
    })
  ).annotations({ description: "write-only: stored encrypted, never returned" })
)

export const Description = Schema.String.pipe(
  Schema.maxLength(MAX_DESCRIPTION_LENGTH, { message: () => `must be at most ${MAX_DESCRIPTION_LENGTH} characters` })
)

const strict = { parseOptions: { onExcessProperty: "error" } } as const

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
  description: Schema.optional(Description),
  owner: Schema.optional(SecretOwner)
}).annotations(strict)
export type CreateSecret = typeof CreateSecret.Type

export const RotateSecretValue = Schema.Struct({ value: SecretValue }).annotations(strict)

export class SecretGrant extends Schema.Class<SecretGrant>("SecretGrant")({
  id: SecretGrantId,
  org_id: OrgId,
  secret_id: SecretId,
  target_project_id: ProjectId,
  created_at: Timestamp
}) {}
