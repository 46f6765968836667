import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
    HttpApiEndpoint.post("create", "/orgs", {
      payload: OrganizationInput,
      success: Organization.pipe(HttpApiSchema.status(201)),
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "Create an organization")
      .annotate(
        OpenApi.Description,
        "Answers 201; the calling user becomes its owner. Not for organization API keys (403)."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs", {
      query: ListQuery,
      success: Page(Organization)
    })
      .annotate(OpenApi.Summary, "List your organizations")
      .annotate(
        OpenApi.Description,
        "The organizations you are a member of (an organization key: its own). Oldest first; paginated " +
          "(limit, cursor)."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID", {
      params: OrgPath,
      success: Organization,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get an organization")
      .annotate(
        OpenApi.Description,
        "Any member of the organization may call it. 404 for an organization you do not belong to."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID", {
      params: OrgPath,
      payload: OrganizationInput,
      success: Organization,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Rename an organization")
      .annotate(OpenApi.Description, "Needs the admin or owner role in the organization (a member is 403).")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Organizations: the caller becomes the owner of those it creates")
{}
