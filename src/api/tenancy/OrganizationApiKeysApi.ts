import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { ApiKeyId, OrgId } from "../../domain/shared/Ids.ts"
import { CreatedOrganizationApiKey, CreateOrganizationApiKey, OrganizationApiKey } from "../../domain/tenancy/ApiKeys.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { OrgPath } from "./OrganizationsApi.ts"
import { Authentication } from "../Security.ts"

export class OrganizationApiKeysApi extends HttpApiGroup.make("organizationApiKeys")
  .annotate(OpenApi.Title, "Organization API keys")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/api-keys")
      .annotate(OpenApi.Summary, "Create an organization API key")
      .setPath(OrgPath)
      .setPayload(CreateOrganizationApiKey)
      .addSuccess(CreatedOrganizationApiKey, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/api-keys")
      .annotate(OpenApi.Summary, "List the organization's API keys")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(OrganizationApiKey))
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/api-keys/:keyID")
      .annotate(OpenApi.Summary, "Revoke an organization API key")
      .setPath(Schema.Struct({ orgID: OrgId, keyID: ApiKeyId }))
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Organization API keys: act for the organization only, with the key's role")
{}
