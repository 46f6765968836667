import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Invitations } from "../../../services/tenancy/Invitations.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const InvitationsLive = HttpApiBuilder.group(Api, "invitations", (handlers) =>
  Effect.map(Invitations, (invitations) =>
    handlers
      .handle("create", ({ path, payload }) => invitations.create(path.orgID, payload.email, payload.role))
      .handle("list", ({ path, urlParams }) => invitations.list(path.orgID, urlParams))
      .handle("remove", ({ path }) => invitations.remove(path.orgID, path.invitationID))
      .handle("listMine", ({ urlParams }) => invitations.listMine(urlParams))
      .handle("accept", ({ path }) => invitations.accept(path.invitationID))))
  .pipe(builtWithOnly(Invitations, Authentication))
