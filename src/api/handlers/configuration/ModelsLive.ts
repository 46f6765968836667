import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Models } from "../../../services/configuration/Models.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const ModelsLive = HttpApiBuilder.group(Api, "models", (handlers) =>
  Effect.map(Effect.service(Models), (models) =>
    handlers
      .handle("create", ({ params, payload }) => models.create(params.orgID, payload))
      .handle("list", ({ params, query }) => models.list(params.orgID, query))
      .handle("get", ({ params }) => models.get(params.orgID, params.modelID))
      .handle("update", ({ params, payload }) => models.update(params.orgID, params.modelID, payload))
      .handle("revisions", ({ params, query }) => models.revisions(params.orgID, params.modelID, query))
      .handle("remove", ({ params }) => models.remove(params.orgID, params.modelID))
      .handle("createGrant", ({ params, payload }) => models.createGrant(params.orgID, params.modelID, payload))
      .handle("listGrants", ({ params, query }) => models.listGrants(params.orgID, params.modelID, query))
      .handle("removeGrant", ({ params }) => models.removeGrant(params.orgID, params.modelID, params.grantID))))
  .pipe(builtWithOnly(Models, Authentication, ApiErrors))
