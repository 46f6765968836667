import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Secrets } from "../../../services/configuration/Secrets.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const SecretsLive = HttpApiBuilder.group(Api, "secrets", (handlers) =>
  Effect.map(Secrets, (secrets) =>
    handlers
      .handle("create", ({ path, payload }) => secrets.create(path.orgID, payload))
      .handle("list", ({ path, urlParams }) => secrets.list(path.orgID, urlParams))
      .handle("get", ({ path }) => secrets.get(path.orgID, path.secretID))
      .handle("rotate", ({ path, payload }) => secrets.rotate(path.orgID, path.secretID, payload.value))
      .handle("remove", ({ path }) => secrets.remove(path.orgID, path.secretID))
      .handle("createGrant", ({ path, payload }) => secrets.createGrant(path.orgID, path.secretID, payload))
      .handle("listGrants", ({ path, urlParams }) => secrets.listGrants(path.orgID, path.secretID, urlParams))
      .handle("removeGrant", ({ path }) => secrets.removeGrant(path.orgID, path.secretID, path.grantID))))
  .pipe(builtWithOnly(Secrets, Authentication))
