import { HttpRouter } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"
import { ApiKeys } from "../../services/tenancy/ApiKeys.ts"
import { Authentication } from "../Security.ts"

/** The bearer API key, read with the caller's standing in the organization and project of the route's path. */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(ApiKeys, (apiKeys) =>
    Authentication.of({
      bearer: (token) =>
        Effect.flatMap(HttpRouter.params, (params) =>
          apiKeys.authenticate(Redacted.value(token), { orgId: params.orgID, projectId: params.projectID }))
    }))
)
