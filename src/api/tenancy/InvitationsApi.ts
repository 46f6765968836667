import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
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
    HttpApiEndpoint.post("create", "/orgs/:orgID/invitations")
      .annotate(OpenApi.Summary, "Invite someone to the organization")
      .setPath(OrgPath)
      .setPayload(CreateInvitation)
      .addSuccess(Invitation, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/invitations")
      .annotate(OpenApi.Summary, "List the organization's invitations")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(Invitation))
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/invitations/:invitationID")
      .annotate(OpenApi.Summary, "Withdraw an invitation")
      .setPath(Schema.Struct({ orgID: OrgId, invitationID: InvitationId }))
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.get("listMine", "/user/invitations")
      .annotate(OpenApi.Summary, "List your pending invitations")
      .setUrlParams(ListQuery)
      .addSuccess(Page(Invitation))
      .addError(Forbidden.Wire)
      .annotate(OpenApi.Description, "Invitations to any organization naming your e-mail address (personal keys only)")
  )
  .add(
    HttpApiEndpoint.post("accept", "/invitations/:invitationID/accept")
      .annotate(OpenApi.Summary, "Accept an invitation")
      .setPath(Schema.Struct({ invitationID: InvitationId }))
      .addSuccess(Member)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Invitations to an organization, accepted by the user whose e-mail they name")
{}
