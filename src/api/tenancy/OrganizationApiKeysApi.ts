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
      .annotate(
        OpenApi.Description,
        "Answers 201 with the new key; its token is shown only in this answer. The key acts for this " +
          "organization only, with its role (admin or member). Needs the admin or owner role in the " +
          "organization (a member is 403). 409 when the organization has 1,000 keys already: delete one " +
          "first."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/api-keys", {
      params: OrgPath,
      query: ListQuery,
      success: Page(OrganizationApiKey),
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "List the organization's API keys")
      .annotate(
        OpenApi.Description,
        "The keys, without their tokens. Oldest first; paginated (limit, cursor). Needs the admin or owner " +
          "role in the organization (a member is 403)."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/api-keys/:keyID", {
      params: Schema.Struct({ orgID: OrgId, keyID: ApiKeyId }),
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Revoke an organization API key")
      .annotate(
        OpenApi.Description,
        "Deletes the key: requests with it are refused at once. Needs the admin or owner role in the " +
          "organization (a member is 403). 404 for a key that is not this organization's."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Organization API keys: act for the organization only, with the key's role")
{}
