import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Models } from "../../../services/configuration/Models.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const ModelsLive = HttpApiBuilder.group(Api, "models", (handlers) =>
  Effect.map(Models, (models) =>
    handlers
      .handle("create", ({ path, payload }) => models.create(path.orgID, payload))
      .handle("list", ({ path, urlParams }) => models.list(path.orgID, urlParams))
      .handle("get", ({ path }) => models.get(path.orgID, path.modelID))
      .handle("update", ({ path, payload }) => models.update(path.orgID, path.modelID, payload))
      .handle("revisions", ({ path, urlParams }) => models.revisions(path.orgID, path.modelID, urlParams))
      .handle("remove", ({ path }) => models.remove(path.orgID, path.modelID))
      .handle("createGrant", ({ path, payload }) => models.createGrant(path.orgID, path.modelID, payload))
      .handle("listGrants", ({ path, urlParams }) => models.listGrants(path.orgID, path.modelID, urlParams))
      .handle("removeGrant", ({ path }) => models.removeGrant(path.orgID, path.modelID, path.grantID))))
  .pipe(builtWithOnly(Models, Authentication))
