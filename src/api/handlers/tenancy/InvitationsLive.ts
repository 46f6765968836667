import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Invitations } from "../../../services/tenancy/Invitations.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const InvitationsLive = HttpApiBuilder.group(Api, "invitations", (handlers) =>
  Effect.map(Effect.service(Invitations), (invitations) =>
    handlers
      .handle("create", ({ params, payload }) => invitations.create(params.orgID, payload.email, payload.role))
      .handle("list", ({ params, query }) => invitations.list(params.orgID, query))
      .handle("remove", ({ params }) => invitations.remove(params.orgID, params.invitationID))
      .handle("listMine", ({ query }) => invitations.listMine(query))
      .handle("accept", ({ params }) => invitations.accept(params.invitationID))))
  .pipe(builtWithOnly(Invitations, Authentication, ApiErrors))
