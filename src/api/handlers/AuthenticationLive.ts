import { Effect, Layer, Redacted } from "effect"
import { ApiKeys } from "../../services/tenancy/ApiKeys.ts"
import { Authentication } from "../Security.ts"

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(ApiKeys, (apiKeys) =>
    Authentication.of({
      bearer: (token) => apiKeys.authenticate(Redacted.value(token))
    }))
)
