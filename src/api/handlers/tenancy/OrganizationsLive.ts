import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentPrincipal } from "../../../domain/tenancy/Principal.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Access } from "../../../services/tenancy/Access.ts"
import { Organizations } from "../../../services/tenancy/Organizations.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const OrganizationsLive = HttpApiBuilder.group(Api, "organizations", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const organizations = yield* Organizations
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(access.requireUser, (userId) => organizations.create(payload.name, userId)))
      .handle("list", ({ query }) =>
        Effect.flatMap(Effect.service(CurrentPrincipal), (principal) => organizations.list(principal, query)))
      .handle("get", ({ params }) =>
        Effect.andThen(access.orgRole(params.orgID), organizations.get(params.orgID)))
      .handle("update", ({ params, payload }) =>
        Effect.andThen(access.requireOrgRole(params.orgID, "admin"), organizations.rename(params.orgID, payload.name)))
  }))
  .pipe(builtWithOnly(Access, Organizations, Authentication, ApiErrors))
