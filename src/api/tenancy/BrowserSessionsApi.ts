import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { BrowserSessionId } from "../../domain/shared/Ids.ts"
import { CreatedBrowserSession, CSRF_HEADER, SESSION_COOKIE } from "../../domain/tenancy/BrowserSessions.ts"
import { Authentication, BearerAuthentication } from "../Security.ts"

export class BrowserSessionsApi extends HttpApiGroup.make("browserSessions")
  .annotate(OpenApi.Title, "Browser sessions")
  .add(
    HttpApiEndpoint.post("open", "/user/sessions", {
      success: CreatedBrowserSession.pipe(HttpApiSchema.status(201)),
      error: Forbidden.Wire
    })
      // A personal API key opens a session; a session cannot open another.
      .middleware(BearerAuthentication)
      .annotate(OpenApi.Summary, "Open a browser session")
      .annotate(
        OpenApi.Description,
        `With a personal API key: sets the \`${SESSION_COOKIE}\` cookie (HttpOnly, Secure, SameSite=Strict, 12 hours) ` +
          `and returns the session's CSRF token, to send as \`${CSRF_HEADER}\` with every request the cookie authenticates. ` +
          "The session acts as the key, and ends when the key is deleted."
      )
  )
  .add(
    HttpApiEndpoint.delete("end", "/user/sessions/:sessionID", {
      params: Schema.Struct({ sessionID: BrowserSessionId }),
      success: HttpApiSchema.NoContent,
      error: [Forbidden.Wire, NotFound.Wire]
    })
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "End a browser session")
      .annotate(OpenApi.Description, "Ends one of your sessions; ending the one whose cookie this request carries also clears the cookie.")
  )
  .annotate(OpenApi.Description, "Sessions for browsers: a cookie and a CSRF token instead of the API key (personal keys only)")
{}
