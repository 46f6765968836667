import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Access } from "../../../services/tenancy/Access.ts"
import { ApiKeys } from "../../../services/tenancy/ApiKeys.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const OrganizationApiKeysLive = HttpApiBuilder.group(Api, "organizationApiKeys", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const apiKeys = yield* ApiKeys
    return handlers
      .handle("create", ({ params, payload }) =>
        Effect.andThen(
          access.requireOrgRole(params.orgID, "admin"),
          apiKeys.createForOrganization(params.orgID, payload.name, payload.role)
        ))
      .handle("list", ({ params, query }) =>
        Effect.andThen(access.requireOrgRole(params.orgID, "admin"), apiKeys.listForOrganization(params.orgID, query)))
      .handle("remove", ({ params }) =>
        Effect.andThen(access.requireOrgRole(params.orgID, "admin"), apiKeys.remove({ orgId: params.orgID }, params.keyID)))
  }))
  .pipe(builtWithOnly(Access, ApiKeys, Authentication, ApiErrors))
