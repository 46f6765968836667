import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Members } from "../../../services/tenancy/Members.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const MembersLive = HttpApiBuilder.group(Api, "members", (handlers) =>
  Effect.map(Effect.service(Members), (members) =>
    handlers
      .handle("list", ({ params, query }) => members.list(params.orgID, query))
      .handle("update", ({ params, payload }) => members.updateRole(params.orgID, params.userID, payload.role))
      .handle("remove", ({ params }) => members.remove(params.orgID, params.userID))))
  .pipe(builtWithOnly(Members, Authentication, ApiErrors))
