/**
 * Stream tokens (docs/agents-api.md, "Stream tokens"): a short-lived credential for one agent's
 * event stream, minted by a caller who may read the agent, for a browser's EventSource.
 *
 * `st1.<payload>.<signature>`: the payload (base64url JSON) names the agent, the API key that
 * minted it and the expiry; the signature is HMAC-SHA256 under a key derived from the server's
 * secret key. Nothing is stored: the token acts as the key that minted it, so deleting that key
 * invalidates the token (and ends the streams it opened, StreamAccess), and every access check
 * of the stream runs as for that key.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { StreamToken } from "../../domain/runtime/StreamTokens.ts"
import { Unauthorized } from "../../domain/shared/Errors.ts"
import { AgentId, ApiKeyId, type OrgId, type ProjectId } from "../../domain/shared/Ids.ts"
import { CurrentPrincipal, type Principal } from "../../domain/tenancy/Principal.ts"
import { SecretKey } from "../../layers/SecretKey.ts"
import { ApiKeys } from "../tenancy/ApiKeys.ts"
import { AgentAccess } from "./AgentAccess.ts"

/** How long a stream token may open a stream (tests shorten it). */
export const StreamTokenLifetime = Context.Reference<Duration.Duration>("StreamTokenLifetime", {
  defaultValue: (): Duration.Duration => Duration.minutes(5)
})

const PREFIX = "st1"
const SIGNING_LABEL = "agent-platform stream token v1"

const Payload = Schema.Struct({ agent: AgentId, key: ApiKeyId, exp: Schema.Int })
const decodePayload = Schema.decodeUnknownOption(Schema.fromJsonString(Payload))

const refused = (reason: string) =>
  new Unauthorized({ error: `The stream token is not valid for this stream: ${reason}; mint a new one` })

const make = Effect.gen(function*() {
  const secretKey = yield* SecretKey
  const lifetime = yield* StreamTokenLifetime
  const apiKeys = yield* ApiKeys
  const agentAccess = yield* AgentAccess
  // A key of its own for this purpose, derived from the server's key: never the key of secrets itself.
  const signingKey = createHmac("sha256", Redacted.value(secretKey)).update(SIGNING_LABEL).digest()
  const sign = (payload: string) => createHmac("sha256", signingKey).update(`${PREFIX}.${payload}`).digest()

  /** A token for the agent's stream, acting as the calling key, for a caller who may read the agent. */
  const mint = (orgId: OrgId, projectId: ProjectId, agentId: AgentId) =>
    Effect.gen(function*() {
      yield* agentAccess.read(orgId, projectId, agentId)
      const principal = yield* CurrentPrincipal
      const expiresAt = (yield* Clock.currentTimeMillis) + Duration.toMillis(lifetime)
      const exp = Math.ceil(expiresAt / 1000)
      const payload = Buffer.from(JSON.stringify({ agent: agentId, key: principal.keyId, exp })).toString("base64url")
      return new StreamToken({
        token: `${PREFIX}.${payload}.${sign(payload).toString("base64url")}`,
        expires_at: new Date(exp * 1000)
      })
    })

  /** Whom a token presented on `agentId`'s stream acts for: its key's principal, while the key exists. */
  const authenticate = (token: string, agentId: string | undefined): Effect.Effect<Principal, Unauthorized> =>
    Effect.gen(function*() {
      const [prefix, payload, signature, ...rest] = token.split(".")
      if (prefix !== PREFIX || payload === undefined || signature === undefined || rest.length > 0) {
        return yield* Effect.fail(refused("it is not a stream token"))
      }
      const expected = sign(payload)
      const given = Buffer.from(signature, "base64url")
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return yield* Effect.fail(refused("its signature does not match"))
      }
      const claims = decodePayload(Buffer.from(payload, "base64url").toString("utf8"))
      if (Option.isNone(claims)) return yield* Effect.fail(refused("it is not a stream token"))
      if (claims.value.agent !== agentId) return yield* Effect.fail(refused("it was minted for another agent"))
      if (claims.value.exp * 1000 <= (yield* Clock.currentTimeMillis)) return yield* Effect.fail(refused("it has expired"))
      return yield* Effect.flatMap(
        apiKeys.principalOfKey(claims.value.key),
        Option.match({
          onNone: () => Effect.fail(refused("the API key that minted it was deleted")),
          onSome: Effect.succeed
        })
      )
    })

  return { mint, authenticate } as const
})

export class StreamTokens extends Context.Service<StreamTokens, Effect.Success<typeof make>>()("StreamTokens") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      SecretKey.layer,
      ApiKeys.layer,
      AgentAccess.layer
    ])
  )
}
