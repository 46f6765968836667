/**
 * The checks of a pool's settings that need the database or the server's configuration
 * (docs/machine-pools.md): the provider's rules (domain/machines/MachinePools.ts), the docker host
 * against the network policy, and its secrets (organization secrets of the pool's organization;
 * for the local provider, the operator's key). Tenant pools and the operator's cluster pools are
 * checked alike.
 */
import { Context, Effect, Layer } from "effect"
import { dockerHostOf, type PoolSettings, settingsProblems } from "../../domain/machines/MachinePools.ts"
import type { Issue } from "../../domain/shared/Errors.ts"
import { invalidRequestWith } from "../../domain/shared/ListedIssues.ts"
import type { OrgId, SecretId } from "../../domain/shared/Ids.ts"
import { Secrets } from "../configuration/Secrets.ts"
import { SecretsRepository } from "../configuration/SecretsRepository.ts"
import { NetworkPolicy } from "../shared/NetworkPolicy.ts"
import { ProviderChecks } from "./ProviderChecks.ts"

const pointerKey = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1")

const make = Effect.gen(function*() {
  const secretRows = yield* SecretsRepository
  const secrets = yield* Secrets
  const checks = yield* ProviderChecks
  const policy = yield* NetworkPolicy

  /** Whether `secretId` is an organization secret of `orgId` (not a member's personal one). */
  const orgSecret = (orgId: OrgId, secretId: SecretId) =>
    Effect.map(secretRows.orgSecretsAmong(orgId, [secretId]), (found) => found.has(secretId))

  /** The problems with the secrets the settings name, and with the local provider's key when `checkKey`. */
  const secretProblems = (orgId: OrgId, settings: PoolSettings, checkKey: boolean) =>
    Effect.gen(function*() {
      const issues: Array<Issue> = []
      const authSecret = settings.provider_auth_secret_id
      const envSecrets = Object.entries(settings.default_machine_secret_env)
      // One read for all of them, however many entries name the same secret.
      const found = yield* secretRows.orgSecretsAmong(orgId, [...new Set([authSecret, ...envSecrets.map(([, id]) => id)])])
      const authOk = found.has(authSecret)
      if (!authOk) {
        issues.push({
          path: "/provider_auth_secret_id",
          message: "must be the id of an organization secret of this organization (not a personal secret)"
        })
      }
      for (const [env, secretId] of envSecrets) {
        if (!found.has(secretId)) {
          issues.push({
            path: `/default_machine_secret_env/${pointerKey(env)}`,
            message: "must be the id of an organization secret of this organization"
          })
        }
      }
      if (settings.provider === "local") {
        if (!checks.localEnabled) {
          issues.push({
            path: "/provider",
            message: "the local provider is disabled on this server: the operator has not set AGENT_PLATFORM_LOCAL_PROVIDER_KEY"
          })
        } else if (checkKey && authOk && !checks.holdsLocalKey(yield* secrets.reveal(authSecret))) {
          issues.push({
            path: "/provider_auth_secret_id",
            message: "the secret does not hold this server's local provider key (AGENT_PLATFORM_LOCAL_PROVIDER_KEY)"
          })
        }
      }
      return issues
    })

  /**
   * Where the operator refuses private targets, a docker pool's host must be `tcp://` (the
   * default is a unix socket) and not a private address literal.
   */
  const hostProblems = (settings: Pick<PoolSettings, "provider" | "provider_config">): Array<Issue> => {
    if (settings.provider !== "docker" || !policy.blocking) return []
    const host = dockerHostOf(settings.provider_config)
    if (!host.startsWith("tcp://")) {
      return [{
        path: "/provider_config/host",
        message: "must be given as tcp://host:port: this server refuses unix sockets for docker pools (AGENT_PLATFORM_BLOCK_PRIVATE_NETWORKS)"
      }]
    }
    const problem = policy.literalProblem(host.replace(/^tcp:/, "http:"))
    return problem === undefined ? [] : [{ path: "/provider_config/host", message: problem }]
  }

  /** Fails with invalid_request listing every problem with the settings. */
  const validate = (orgId: OrgId, settings: PoolSettings, checkKey: boolean) =>
    Effect.gen(function*() {
      const issues = [
        ...settingsProblems(settings),
        ...hostProblems(settings),
        ...(yield* secretProblems(orgId, settings, checkKey))
      ]
      if (issues.length > 0) {
        return yield* Effect.fail(
          invalidRequestWith(`The machine pool settings are not valid for the ${settings.provider} provider`, issues)
        )
      }
    })

  return { validate, hostProblems, orgSecret } as const
})

export class PoolSettingsValidation extends Context.Service<PoolSettingsValidation, Effect.Success<typeof make>>()("PoolSettingsValidation") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      SecretsRepository.layer,
      Secrets.layer,
      ProviderChecks.layer,
      NetworkPolicy.layer
    ])
  )
}
