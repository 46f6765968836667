/**
 * Model provider configs (mpc_): where a model is reached (an API format and a base URL) and with
 * which credential, a secret (docs/models.md).
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { ModelProviderConfigId, OrgId, SecretId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { Description } from "./Secrets.ts"

/** The wire protocol of a model endpoint (ModelAPIFormat). */
export const ApiFormat = Schema.Literals(["openai-responses", "openai-chat-completions", "anthropic-messages"])
export type ApiFormat = typeof ApiFormat.Type

/** tenant: managed through this API; cluster: installed by the operator, read-only here. */
export const ManagementKind = Schema.Literals(["tenant", "cluster"])
export type ManagementKind = typeof ManagementKind.Type

/** The API root including its version path, e.g. https://api.openai.com/v1. */
export const BaseUrl = Schema.String.pipe(
  Schema.check(Schema.makeFilter((text) => {
    if (!URL.canParse(text)) return "must be an absolute http(s) URL such as https://api.openai.com/v1"
    const url = new URL(text)
    if (url.protocol !== "http:" && url.protocol !== "https:") return "must use http or https"
    if (url.username !== "" || url.password !== "") {
      return "must not carry credentials; reference a secret with auth_secret_id"
    }
    if (url.search !== "" || url.hash !== "") return "must not have a query or fragment"
    return true
  }))
)

export class ModelProviderConfig extends Schema.Class<ModelProviderConfig>("ModelProviderConfig")({
  id: ModelProviderConfigId,
  org_id: OrgId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  api_format: ApiFormat,
  base_url: Schema.String,
  auth_secret_id: Schema.NullOr(SecretId),
  management_kind: ManagementKind,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export const CreateModelProviderConfig = Schema.Struct({
  name: ResourceName,
  api_format: ApiFormat,
  base_url: BaseUrl,
  auth_secret_id: optional(Schema.NullOr(SecretId)),
  description: optional(Schema.NullOr(Description))
})
export type CreateModelProviderConfig = typeof CreateModelProviderConfig.Type

/** Each field present is changed; `null` clears `auth_secret_id` or `description`. */
export const UpdateModelProviderConfig = Schema.Struct({
  name: optional(ResourceName),
  api_format: optional(ApiFormat),
  base_url: optional(BaseUrl),
  auth_secret_id: optional(Schema.NullOr(SecretId)),
  description: optional(Schema.NullOr(Description))
})
export type UpdateModelProviderConfig = typeof UpdateModelProviderConfig.Type
