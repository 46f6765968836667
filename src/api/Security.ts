/**
 * Authentication: one HttpApi security middleware. Today it has one scheme, bearer API keys;
 * the browser session cookie with its CSRF header joins as a second entry of
 * `security` with its own handler.
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { AuthenticationUnavailable, Unauthorized } from "../domain/shared/Errors.ts"
import { CurrentPrincipal } from "../domain/tenancy/Principal.ts"

/**
 * The bearer scheme, one for every middleware that reads `Authorization: Bearer`: the OpenAPI
 * document has one `bearer` security scheme, and Effect 4 refuses two different ones of that name.
 */
export const bearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "A personal or organization API key: `Authorization: Bearer <token>`")
)

export class Authentication
  extends HttpApiMiddleware.Service<Authentication, { provides: CurrentPrincipal }>()("Authentication", {
    error: [Unauthorized.Wire, AuthenticationUnavailable.Wire],
    security: { bearer }
  })
{}

/**
 * The event stream's authentication: a stream token in the query (`?stream_token=`, minted by
 * `POST .../events/stream-token`, for a browser's EventSource, which cannot send headers), else
 * the bearer API key. Only the event stream route has it.
 */
export class StreamAuthentication
  extends HttpApiMiddleware.Service<StreamAuthentication, { provides: CurrentPrincipal }>()("StreamAuthentication", {
    error: [Unauthorized.Wire, AuthenticationUnavailable.Wire],
    security: {
      streamToken: HttpApiSecurity.apiKey({ key: "stream_token", in: "query" }).pipe(
        HttpApiSecurity.annotate(
          OpenApi.Description,
          "A stream token from `POST .../events/stream-token`: valid 5 minutes, for that agent's stream only"
        )
      ),
      bearer
    }
  })
{}
