/**
 * Machine tokens: short-lived JWTs (HS256) for the machine WebSocket, signed with a key derived
 * from the server's secret key (so the secret key itself never signs anything a client sees).
 * Claims: `sub` the machine id, `cred` the daemon token or API key that registered it, `typ`
 * "machine", `iat`, `exp`. A token that does not verify, is of another type or expired is refused;
 * whether its machine and credential still exist is checked by the caller.
 */
import { Clock, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { MachineId } from "../../domain/shared/Ids.ts"
import { SecretKey } from "../../layers/SecretKey.ts"

/** How long a machine token lives. */
export const MACHINE_TOKEN_TTL_SECONDS = 900

const Claims = Schema.Struct({
  sub: MachineId,
  cred: Schema.String,
  typ: Schema.Literal("machine"),
  iat: Schema.Int,
  exp: Schema.Int
})
export type MachineTokenClaims = typeof Claims.Type

const HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url")

const make = Effect.gen(function*() {
  const secretKey = yield* SecretKey
  const key = createHmac("sha256", Redacted.value(secretKey)).update("agent-platform machine token v1").digest()
  const signature = (input: string) => createHmac("sha256", key).update(input).digest()

  const issue = (machineId: MachineId, credentialId: string) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const iat = Math.floor(now / 1000)
      const payload = Buffer.from(JSON.stringify({
        sub: machineId,
        cred: credentialId,
        typ: "machine",
        iat,
        exp: iat + MACHINE_TOKEN_TTL_SECONDS
      })).toString("base64url")
      const input = `${HEADER}.${payload}`
      return { token: `${input}.${signature(input).toString("base64url")}`, expiresIn: MACHINE_TOKEN_TTL_SECONDS }
    })

  /** The claims of a valid, unexpired machine token. */
  const verify = (token: string): Effect.Effect<Option.Option<MachineTokenClaims>> =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const parts = token.split(".")
      if (parts.length !== 3 || parts[0] !== HEADER) return Option.none()
      const given = Buffer.from(parts[2], "base64url")
      const expected = signature(`${parts[0]}.${parts[1]}`)
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return Option.none()
      let json: unknown
      try {
        json = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"))
      } catch {
        return Option.none()
      }
      return Option.filter(Schema.decodeUnknownOption(Claims)(json), (claims) => claims.exp * 1000 > now)
    })

  return { issue, verify } as const
})

export class MachineTokens extends Context.Service<MachineTokens, Effect.Success<typeof make>>()("MachineTokens") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(SecretKey.layer))
}
