/**
 * Authentication, as HttpApi security middlewares: `Authentication` (the project-scoped routes: a
 * bearer API key, or a browser session cookie with its CSRF header), `BearerAuthentication` (the
 * workspace-scoped routes, and opening a browser session: the API key only) and
 * `StreamAuthentication` (the event stream: a stream token, or the API key).
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { AuthenticationUnavailable, CsrfCheckFailed, InvalidRequest, RateLimited, Unauthorized } from "../domain/shared/Errors.ts"
import { CSRF_HEADER, SESSION_COOKIE } from "../domain/tenancy/BrowserSessions.ts"
import { CurrentPrincipal } from "../domain/tenancy/Principal.ts"

/**
 * The bearer scheme, one for every middleware that reads `Authorization: Bearer`: the OpenAPI
 * document has one `bearer` security scheme, and Effect 4 refuses two different ones of that name.
 */
export const bearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "A personal or organization API key: `Authorization: Bearer <token>`")
)

/** A browser session's cookie (`POST /v1/user/sessions`), valid only with the session's CSRF token in its header. */
export const session = HttpApiSecurity.apiKey({ key: SESSION_COOKIE, in: "cookie" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    `A browser session (\`POST /v1/user/sessions\`): the \`${SESSION_COOKIE}\` cookie, with the session's CSRF token in the \`${CSRF_HEADER}\` header`
  )
)

/** The project-scoped routes: the bearer API key when the request sends one, else a browser session. */
export class Authentication
  extends HttpApiMiddleware.Service<Authentication, { provides: CurrentPrincipal }>()("Authentication", {
    error: [Unauthorized.Wire, CsrfCheckFailed.Wire, RateLimited.Wire, AuthenticationUnavailable.Wire],
    security: { bearer, session }
  })
{}

/** The workspace-scoped routes, and opening a browser session: the bearer API key only. */
export class BearerAuthentication
  extends HttpApiMiddleware.Service<BearerAuthentication, { provides: CurrentPrincipal }>()("BearerAuthentication", {
    error: [Unauthorized.Wire, RateLimited.Wire, AuthenticationUnavailable.Wire],
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
    error: [InvalidRequest.Wire, Unauthorized.Wire, RateLimited.Wire, AuthenticationUnavailable.Wire],
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
