import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Members } from "../../../services/tenancy/Members.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const MembersLive = HttpApiBuilder.group(Api, "members", (handlers) =>
  Effect.map(Members, (members) =>
    handlers
      .handle("list", ({ path, urlParams }) => members.list(path.orgID, urlParams))
      .handle("update", ({ path, payload }) => members.updateRole(path.orgID, path.userID, payload.role))
      .handle("remove", ({ path }) => members.remove(path.orgID, path.userID))))
  .pipe(builtWithOnly(Members, Authentication))
