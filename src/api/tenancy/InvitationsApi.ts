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
      .annotate(
        OpenApi.Description,
        "Answers 201 with a pending invitation for the e-mail address; the server sends no e-mail (the " +
          "invitee finds it at GET /v1/user/invitations). Needs the admin or owner role in the organization; " +
          "inviting an owner needs the owner role (403). 409 when the address has a pending invitation " +
          "already, or belongs to a member (unless an owner invites an admin or member with role owner, to " +
          "make them an owner)."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/invitations", {
      params: OrgPath,
      query: ListQuery,
      success: Page(Invitation),
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "List the organization's invitations")
      .annotate(
        OpenApi.Description,
        "The pending invitations. Oldest first; paginated (limit, cursor). Needs the admin or owner role " +
          "in the organization (a member is 403)."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/invitations/:invitationID", {
      params: Schema.Struct({ orgID: OrgId, invitationID: InvitationId }),
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Withdraw an invitation")
      .annotate(
        OpenApi.Description,
        "Deletes a pending invitation. Needs the admin or owner role in the organization (an admin may " +
          "withdraw an owner's invitation too). 404 for an unknown invitation."
      )
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
      .annotate(
        OpenApi.Description,
        "Makes you a member with the invitation's role and deletes the invitation; answers 200 with the " +
          "membership. Only the user whose e-mail address it names may accept: to anyone else it is 404. 409 " +
          "when you are a member already (an invitation with role owner makes a member an owner instead). " +
          "Not for organization API keys (403)."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Invitations to an organization, accepted by the user whose e-mail they name")
{}
