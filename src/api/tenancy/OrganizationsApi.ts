import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { OrgId } from "../../domain/shared/Ids.ts"
import { Organization, OrganizationInput } from "../../domain/tenancy/Organizations.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { Authentication } from "../Security.ts"

export const OrgPath = Schema.Struct({ orgID: OrgId })

export class OrganizationsApi extends HttpApiGroup.make("organizations")
  .annotate(OpenApi.Title, "Organizations")
  .add(
    HttpApiEndpoint.post("create", "/orgs")
      .annotate(OpenApi.Summary, "Create an organization")
      .setPayload(OrganizationInput)
      .addSuccess(Organization, { status: 201 })
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs")
      .annotate(OpenApi.Summary, "List your organizations")
      .setUrlParams(ListQuery)
      .addSuccess(Page(Organization))
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID")
      .annotate(OpenApi.Summary, "Get an organization")
      .setPath(OrgPath)
      .addSuccess(Organization)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID")
      .annotate(OpenApi.Summary, "Rename an organization")
      .setPath(OrgPath)
      .setPayload(OrganizationInput)
      .addSuccess(Organization)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Organizations: the caller becomes the owner of those it creates")
{}
