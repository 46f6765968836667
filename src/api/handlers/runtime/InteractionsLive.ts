import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Interactions } from "../../../services/runtime/Interactions.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const InteractionsLive = HttpApiBuilder.group(Api, "interactions", (handlers) =>
  Effect.map(Interactions, (interactions) =>
    handlers
      .handle("list", ({ path, urlParams }) => interactions.listForProject(path.orgID, path.projectID, urlParams))
      .handle("listForAgent", ({ path, urlParams }) =>
        interactions.listForAgent(path.orgID, path.projectID, path.agentID, urlParams))
      .handle("resolve", ({ path, payload }) =>
        interactions.resolve(path.orgID, path.projectID, path.interactionID, payload))))
  .pipe(builtWithOnly(Interactions, Authentication))
