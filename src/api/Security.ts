/**
 * Authentication: one HttpApi security middleware. Today it has one scheme, bearer API keys;
 * the browser session cookie with its CSRF header (spec 5) joins as a second entry of
 * `security` with its own handler.
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AuthenticationUnavailable, Unauthorized } from "../domain/shared/Errors.ts"
import { CurrentPrincipal } from "../domain/tenancy/Principal.ts"

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(Unauthorized.Wire, AuthenticationUnavailable.Wire),
  provides: CurrentPrincipal,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "A personal or organization API key: `Authorization: Bearer <token>`")
    )
  }
}) {}
