import { HttpApiBuilder } from "effect/http-api"
import { HttpServerRequest } from "effect/http"
import { Duration, Effect } from "effect"
import { SESSION_COOKIE } from "../../../domain/tenancy/BrowserSessions.ts"
import { CurrentPrincipal } from "../../../domain/tenancy/Principal.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Access } from "../../../services/tenancy/Access.ts"
import { BrowserSessions, SESSION_LIFETIME_SECONDS } from "../../../services/tenancy/BrowserSessions.ts"
import { sha256Hex } from "../../../services/shared/Hash.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication, BearerAuthentication, session } from "../../Security.ts"

const cookieOptions = { path: "/", sameSite: "strict", maxAge: Duration.seconds(SESSION_LIFETIME_SECONDS) } as const

export const BrowserSessionsLive = HttpApiBuilder.group(Api, "browserSessions", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const sessions = yield* BrowserSessions
    return handlers
      .handle("open", () =>
        Effect.gen(function*() {
          const { cookie, session: opened } = yield* sessions.open(yield* CurrentPrincipal)
          yield* HttpApiBuilder.securitySetCookie(session, cookie, cookieOptions)
          return opened
        }))
      .handle("end", ({ params }) =>
        Effect.gen(function*() {
          const ended = yield* sessions.end(yield* access.requireUser, params.sessionID)
          const request = yield* HttpServerRequest.HttpServerRequest
          const sent = request.cookies[SESSION_COOKIE]
          if (sent !== undefined && sha256Hex(sent) === ended) {
            yield* HttpApiBuilder.securitySetCookie(session, "", { ...cookieOptions, maxAge: Duration.zero })
          }
        }))
  }))
  .pipe(builtWithOnly(Access, BrowserSessions, Authentication, BearerAuthentication, ApiErrors))
