import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentPrincipal } from "../../../domain/tenancy/Principal.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Access } from "../../../services/tenancy/Access.ts"
import { Organizations } from "../../../services/tenancy/Organizations.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const OrganizationsLive = HttpApiBuilder.group(Api, "organizations", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const organizations = yield* Organizations
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(access.requireUser, (userId) => organizations.create(payload.name, userId)))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => organizations.list(principal, urlParams)))
      .handle("get", ({ path }) =>
        Effect.andThen(access.orgRole(path.orgID), organizations.get(path.orgID)))
      .handle("update", ({ path, payload }) =>
        Effect.andThen(access.requireOrgRole(path.orgID, "admin"), organizations.rename(path.orgID, payload.name)))
  }))
  .pipe(builtWithOnly(Access, Organizations, Authentication))
