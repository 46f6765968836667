/**
 * Browser sessions (docs/access.md, "Browser sessions"): a personal API key opens one, for a
 * browser to call the project-scoped routes with a cookie instead of the key. The session acts as
 * the key that opened it (its caller, its standing), lives 12 hours, and ends sooner when ended
 * or when that key is deleted. Every request its cookie authenticates must carry its CSRF token
 * in the `x-csrf-token` header: a page of another site can make the browser send the cookie, but
 * cannot read the token. Only the hashes of the cookie and of the token are stored.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { AuthenticationUnavailable } from "../../domain/shared/Errors.ts"
import { CsrfCheckFailed, Forbidden, NotFound, Unauthorized } from "../../domain/shared/Errors.ts"
import { BrowserSessionId, type UserId } from "../../domain/shared/Ids.ts"
import { CreatedBrowserSession, CSRF_HEADER } from "../../domain/tenancy/BrowserSessions.ts"
import type { Principal } from "../../domain/tenancy/Principal.ts"
import { newBearerToken } from "../shared/BearerTokens.ts"
import { someOrFail } from "../shared/Failures.ts"
import { sha256Hex } from "../shared/Hash.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { ApiKeys, type RequestPath, unavailableOnSqlError } from "./ApiKeys.ts"
import { BrowserSessionsRepository } from "./BrowserSessionsRepository.ts"

export const SESSION_LIFETIME_SECONDS = 12 * 60 * 60

const make = Effect.gen(function*() {
  const sessions = yield* BrowserSessionsRepository
  const apiKeys = yield* ApiKeys
  const ids = yield* IdGenerator

  /** Opens a session for the caller of a personal key: the session, and the cookie's value (set once, never shown again). */
  const open = (principal: Principal) =>
    Effect.gen(function*() {
      if (principal.kind !== "user") {
        return yield* Effect.fail(new Forbidden({ error: "A browser session is opened with a personal API key, not an organization key" }))
      }
      const cookie = newBearerToken("")
      const csrfToken = newBearerToken("")
      const stored = yield* sessions.insert({
        id: yield* ids.make(BrowserSessionId),
        token_hash: sha256Hex(cookie),
        csrf_token_hash: sha256Hex(csrfToken),
        api_key_id: principal.keyId,
        lifetime_seconds: SESSION_LIFETIME_SECONDS
      })
      return { session: new CreatedBrowserSession({ ...stored, csrf_token: csrfToken }), cookie }
    })

  /** The caller of a session cookie, when the request carries the session's CSRF token (`csrfToken`). */
  const authenticate = (
    cookie: string,
    csrfToken: string | undefined,
    path: RequestPath
  ): Effect.Effect<Principal, Unauthorized | CsrfCheckFailed | AuthenticationUnavailable> =>
    Effect.gen(function*() {
      const session = yield* sessions.findActive(sha256Hex(cookie)).pipe(unavailableOnSqlError)
      if (Option.isNone(session)) {
        return yield* Effect.fail(new Unauthorized({
          error: "The session cookie is not valid: the session expired or was ended; open a new one with POST /v1/user/sessions"
        }))
      }
      if (csrfToken === undefined || csrfToken === "") {
        return yield* Effect.fail(new CsrfCheckFailed({ error: `Send the session's CSRF token in the ${CSRF_HEADER} header with every request` }))
      }
      if (sha256Hex(csrfToken) !== session.value.csrf_token_hash) {
        return yield* Effect.fail(new CsrfCheckFailed({ error: `The ${CSRF_HEADER} header does not hold this session's CSRF token` }))
      }
      return yield* apiKeys.authenticateKeyHash(session.value.key_token_hash, path)
    })

  /** Ends one of the user's sessions; the hash of its cookie. */
  const end = (userId: UserId, sessionId: BrowserSessionId) =>
    sessions.remove(sessionId, userId).pipe(
      someOrFail(() => new NotFound({ error: `Browser session ${sessionId} not found` })),
      Effect.map((removed) => removed.token_hash)
    )

  return { open, authenticate, end } as const
})

export class BrowserSessions extends Context.Service<BrowserSessions, Effect.Success<typeof make>>()("BrowserSessions") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([BrowserSessionsRepository.layer, ApiKeys.layer, IdGenerator.layer])
  )
}
