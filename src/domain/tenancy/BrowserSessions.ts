/**
 * Browser sessions (docs/access.md, "Browser sessions"): a personal API key opens one; the
 * browser then authenticates with the session cookie, sending the session's CSRF token in a
 * header with every request.
 */
import { Schema } from "effect"
import { BrowserSessionId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"

/** The cookie that carries a session (HttpOnly: a page's scripts never see it). */
export const SESSION_COOKIE = "agent_platform_session"
/** The header that must carry the session's CSRF token on every request the cookie authenticates. */
export const CSRF_HEADER = "x-csrf-token"

export class CreatedBrowserSession extends Schema.Class<CreatedBrowserSession>("CreatedBrowserSession")({
  id: BrowserSessionId,
  csrf_token: Schema.String.annotate({ description: `send it as \`${CSRF_HEADER}\` with every request the session cookie authenticates` }),
  created_at: Timestamp,
  expires_at: Timestamp
}) {}
