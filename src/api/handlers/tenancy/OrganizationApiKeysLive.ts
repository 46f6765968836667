import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Access } from "../../../services/tenancy/Access.ts"
import { ApiKeys } from "../../../services/tenancy/ApiKeys.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const OrganizationApiKeysLive = HttpApiBuilder.group(Api, "organizationApiKeys", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const apiKeys = yield* ApiKeys
    return handlers
      .handle("create", ({ path, payload }) =>
        Effect.andThen(
          access.requireOrgRole(path.orgID, "admin"),
          apiKeys.createForOrganization(path.orgID, payload.name, payload.role)
        ))
      .handle("list", ({ path, urlParams }) =>
        Effect.andThen(access.requireOrgRole(path.orgID, "admin"), apiKeys.listForOrganization(path.orgID, urlParams)))
      .handle("remove", ({ path }) =>
        Effect.andThen(access.requireOrgRole(path.orgID, "admin"), apiKeys.remove({ orgId: path.orgID }, path.keyID)))
  }))
  .pipe(builtWithOnly(Access, ApiKeys, Authentication))
