import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { InvitationId, OrgId } from "../../domain/shared/Ids.ts"
import { CreateInvitation, Invitation } from "../../domain/tenancy/Invitations.ts"
import { Member } from "../../domain/tenancy/Members.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { OrgPath } from "./OrganizationsApi.ts"
import { Authentication } from "../Security.ts"

export class InvitationsApi extends HttpApiGroup.make("invitations")
  .annotate(OpenApi.Title, "Invitations")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/invitations", {
      params: OrgPath,
      payload: CreateInvitation,
      success: Invitation.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Invite someone to the organization")
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/invitations", {
      params: OrgPath,
      query: ListQuery,
      success: Page(Invitation),
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "List the organization's invitations")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/invitations/:invitationID", {
      params: Schema.Struct({ orgID: OrgId, invitationID: InvitationId }),
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Withdraw an invitation")
  )
  .add(
    HttpApiEndpoint.get("listMine", "/user/invitations", {
      query: ListQuery,
      success: Page(Invitation),
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "List your pending invitations")
      .annotate(OpenApi.Description, "Invitations to any organization naming your e-mail address (personal keys only)")
  )
  .add(
    HttpApiEndpoint.post("accept", "/invitations/:invitationID/accept", {
      params: Schema.Struct({ invitationID: InvitationId }),
      success: Member,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Accept an invitation")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Invitations to an organization, accepted by the user whose e-mail they name")
{}
