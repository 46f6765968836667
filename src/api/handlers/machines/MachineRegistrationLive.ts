import { HttpApiBuilder } from "effect/http-api"
import { Effect, Layer, Option, Redacted } from "effect"
import { CurrentRegistrant, type Registrant } from "../../../domain/machines/Registrant.ts"
import { AuthenticationUnavailable, Forbidden, Unauthorized } from "../../../domain/shared/Errors.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { withinRate } from "../../../layers/http/RateLimitHeaders.ts"
import { DAEMON_TOKEN_PREFIX, DaemonTokens } from "../../../services/machines/DaemonTokens.ts"
import { Machines } from "../../../services/machines/Machines.ts"
import { POOL_MACHINE_TOKEN_PREFIX } from "../../../services/machines/PoolMachines.ts"
import { ApiKeys, unavailableOnSqlError } from "../../../services/tenancy/ApiKeys.ts"
import { KeyRateLimits } from "../../../services/tenancy/KeyRateLimits.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { RegistrationAuthentication } from "../../machines/MachineRegistrationApi.ts"

/**
 * A daemon token (`dtk_…`) names an organization; a pool machine's token (`mpt_…`) its machine;
 * any other token must be a personal API key. Each registers within the rate of its credential
 * (the key, the daemon token, the pool: KeyRateLimits).
 */
export const RegistrationAuthenticationLive = Layer.effect(
  RegistrationAuthentication,
  Effect.gen(function*() {
    const daemonTokens = yield* DaemonTokens
    const apiKeys = yield* ApiKeys
    const machines = yield* Machines
    const registrantOf = (token: string): Effect.Effect<Registrant, Unauthorized | Forbidden | AuthenticationUnavailable> => {
      if (token.startsWith(POOL_MACHINE_TOKEN_PREFIX)) {
        return Effect.flatMap(machines.poolRegistrant(token), Option.match({
          onNone: () => Effect.fail(new Unauthorized({ error: "The pool machine's registration token is not valid, or its machine was deleted" })),
          onSome: Effect.succeed
        }))
      }
      if (token.startsWith(DAEMON_TOKEN_PREFIX)) {
        return daemonTokens.authenticate(token).pipe(
          unavailableOnSqlError,
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new Unauthorized({ error: "The daemon token is not valid, has expired or has been revoked" })),
            onSome: ({ orgId, tokenId }) =>
              Effect.succeed<Registrant>({ kind: "daemon_token", orgId, credentialId: tokenId })
          }))
        )
      }
      return Effect.flatMap(apiKeys.authenticate(token), (principal) =>
        principal.kind === "user"
          ? Effect.succeed<Registrant>({ kind: "user", userId: principal.userId, credentialId: principal.keyId })
          : Effect.fail(
            new Forbidden({
              error: "An organization API key cannot register machines; use a daemon token of the organization " +
                "(POST /v1/orgs/{orgID}/daemon-tokens) or a personal API key"
            })
          ))
    }
    const limited = withinRate(yield* KeyRateLimits)
    return RegistrationAuthentication.of({
      bearer: (httpEffect, { credential }) =>
        Effect.flatMap(
          registrantOf(Redacted.value(credential)),
          (registrant) => limited(registrant.credentialId, Effect.provideService(httpEffect, CurrentRegistrant, registrant))
        )
    })
  })
)

export const MachineRegistrationLive = HttpApiBuilder.group(Api, "machineRegistration", (handlers) =>
  Effect.map(Effect.service(Machines), (machines) => handlers.handle("register", ({ payload }) => machines.register(payload))))
  .pipe(builtWithOnly(Machines, RegistrationAuthentication, ApiErrors))
