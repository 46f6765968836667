import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { ModelProviderConfigs } from "../../../services/configuration/ModelProviderConfigs.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const ModelProviderConfigsLive = HttpApiBuilder.group(Api, "modelProviderConfigs", (handlers) =>
  Effect.map(ModelProviderConfigs, (configs) =>
    handlers
      .handle("create", ({ path, payload }) => configs.create(path.orgID, payload))
      .handle("list", ({ path, urlParams }) => configs.list(path.orgID, urlParams))
      .handle("get", ({ path }) => configs.get(path.orgID, path.modelProviderConfigID))
      .handle("update", ({ path, payload }) => configs.update(path.orgID, path.modelProviderConfigID, payload))
      .handle("remove", ({ path }) => configs.remove(path.orgID, path.modelProviderConfigID))))
  .pipe(builtWithOnly(ModelProviderConfigs, Authentication))
