import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Secrets } from "../../../services/configuration/Secrets.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const SecretsLive = HttpApiBuilder.group(Api, "secrets", (handlers) =>
  Effect.map(Effect.service(Secrets), (secrets) =>
    handlers
      .handle("create", ({ params, payload }) => secrets.create(params.orgID, payload))
      .handle("list", ({ params, query }) => secrets.list(params.orgID, query))
      .handle("get", ({ params }) => secrets.get(params.orgID, params.secretID))
      .handle("rotate", ({ params, payload }) => secrets.rotate(params.orgID, params.secretID, payload.value))
      .handle("remove", ({ params }) => secrets.remove(params.orgID, params.secretID))
      .handle("createGrant", ({ params, payload }) => secrets.createGrant(params.orgID, params.secretID, payload))
      .handle("listGrants", ({ params, query }) => secrets.listGrants(params.orgID, params.secretID, query))
      .handle("removeGrant", ({ params }) => secrets.removeGrant(params.orgID, params.secretID, params.grantID))))
  .pipe(builtWithOnly(Secrets, Authentication, ApiErrors))
