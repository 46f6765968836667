import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { ModelProviderConfigs } from "../../../services/configuration/ModelProviderConfigs.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const ModelProviderConfigsLive = HttpApiBuilder.group(Api, "modelProviderConfigs", (handlers) =>
  Effect.map(Effect.service(ModelProviderConfigs), (configs) =>
    handlers
      .handle("create", ({ params, payload }) => configs.create(params.orgID, payload))
      .handle("list", ({ params, query }) => configs.list(params.orgID, query))
      .handle("get", ({ params }) => configs.get(params.orgID, params.modelProviderConfigID))
      .handle("update", ({ params, payload }) => configs.update(params.orgID, params.modelProviderConfigID, payload))
      .handle("remove", ({ params }) => configs.remove(params.orgID, params.modelProviderConfigID))))
  .pipe(builtWithOnly(ModelProviderConfigs, Authentication, ApiErrors))
