import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { OrgId, UserId } from "../../domain/shared/Ids.ts"
import { Member, UpdateMember } from "../../domain/tenancy/Members.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { OrgPath } from "./OrganizationsApi.ts"
import { Authentication } from "../Security.ts"

const MemberPath = Schema.Struct({ orgID: OrgId, userID: UserId })

export class MembersApi extends HttpApiGroup.make("members")
  .annotate(OpenApi.Title, "Members")
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/members", {
      params: OrgPath,
      query: ListQuery,
      success: Page(Member),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the organization's members")
      .annotate(
        OpenApi.Description,
        "Each membership with the member's e-mail address. Ordered by user id; paginated (limit, cursor). " +
          "Any member of the organization may call it."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/members/:userID", {
      params: MemberPath,
      payload: UpdateMember,
      success: Member,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Change a member's role")
      .annotate(
        OpenApi.Description,
        "Sets the role to admin or member (a member becomes an owner by accepting an owner's invitation). " +
          "Needs the admin or owner role in the organization; only an owner can demote an owner (403). 409 " +
          "for the last owner: make another owner first. 404 for a user who is not a member."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/members/:userID", {
      params: MemberPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Remove a member from the organization")
      .annotate(
        OpenApi.Description,
        "Also ends their project memberships in the organization. Any member may remove themselves " +
          "(leave); removing another needs the admin or owner role, and removing an owner needs the owner " +
          "role (403). 409 for the last owner, or while the member's personal secrets or skills are in use " +
          "(the error names them)."
      )
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Organization members. Removal also ends the user's project memberships in the organization; " +
      "it is refused for the last owner and while the member's personal resources are in use"
  )
{}
