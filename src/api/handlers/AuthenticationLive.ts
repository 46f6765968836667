import { HttpRouter } from "effect/http"
import { Effect, Layer, Redacted } from "effect"
import { CurrentPrincipal } from "../../domain/tenancy/Principal.ts"
import { ApiKeys } from "../../services/tenancy/ApiKeys.ts"
import { Authentication } from "../Security.ts"

/** The bearer API key, read with the caller's standing in the organization and project of the route's path. */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(Effect.service(ApiKeys), (apiKeys) =>
    Authentication.of({
      bearer: (httpEffect, { credential }) =>
        Effect.flatMap(
          Effect.flatMap(HttpRouter.params, (params) =>
            apiKeys.authenticate(Redacted.value(credential), { orgId: params.orgID, projectId: params.projectID })),
          (principal) => Effect.provideService(httpEffect, CurrentPrincipal, principal)
        )
    }))
)
