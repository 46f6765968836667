import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Interactions } from "../../../services/runtime/Interactions.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const InteractionsLive = HttpApiBuilder.group(Api, "interactions", (handlers) =>
  Effect.map(Effect.service(Interactions), (interactions) =>
    handlers
      .handle("list", ({ params, query }) => interactions.listForProject(params.orgID, params.projectID, query))
      .handle("listForAgent", ({ params, query }) =>
        interactions.listForAgent(params.orgID, params.projectID, params.agentID, query))
      .handle("resolve", ({ params, payload }) =>
        interactions.resolve(params.orgID, params.projectID, params.interactionID, payload))))
  .pipe(builtWithOnly(Interactions, Authentication, ApiErrors))
