import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { ApiKeyId, OrgId } from "../../domain/shared/Ids.ts"
import { CreatedOrganizationApiKey, CreateOrganizationApiKey, OrganizationApiKey } from "../../domain/tenancy/ApiKeys.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { OrgPath } from "./OrganizationsApi.ts"
import { Authentication } from "../Security.ts"

export class OrganizationApiKeysApi extends HttpApiGroup.make("organizationApiKeys")
  .annotate(OpenApi.Title, "Organization API keys")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/api-keys", {
      params: OrgPath,
      payload: CreateOrganizationApiKey,
      success: CreatedOrganizationApiKey.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Create an organization API key")
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/api-keys", {
      params: OrgPath,
      query: ListQuery,
      success: Page(OrganizationApiKey),
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "List the organization's API keys")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/api-keys/:keyID", {
      params: Schema.Struct({ orgID: OrgId, keyID: ApiKeyId }),
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Revoke an organization API key")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Organization API keys: act for the organization only, with the key's role")
{}
