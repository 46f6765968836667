import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
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
    HttpApiEndpoint.get("list", "/orgs/:orgID/members")
      .annotate(OpenApi.Summary, "List the organization's members")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(Member))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/members/:userID")
      .annotate(OpenApi.Summary, "Change a member's role")
      .setPath(MemberPath)
      .setPayload(UpdateMember)
      .addSuccess(Member)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/members/:userID")
      .annotate(OpenApi.Summary, "Remove a member from the organization")
      .setPath(MemberPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Organization members. Removal also ends the user's project memberships in the organization; " +
      "it is refused for the last owner and while the member's personal resources are in use"
  )
{}
