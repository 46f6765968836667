/**
 * Machine pools (docs/machine-pools.md): org admins make, change and delete them and grant them
 * to projects; every member reads them. A pool's settings are checked against its provider
 * (required and refused size fields, the provider's objects, sizes against each other) and its
 * secrets must be organization secrets. Provisioning from pools is not built yet, so `usage` is
 * zero and deleting a pool deletes no machines.
 */
import { Effect, Option, Schema } from "effect"
import { canonicalJson } from "../../domain/configuration/agent-config/Canonical.ts"
import type { JsonValue } from "../../domain/configuration/agent-config/Definition.ts"
import type { CreateGrant } from "../../domain/configuration/Grants.ts"
import {
  type CheckConnection,
  type ClusterPoolsFile,
  type ConnectionChecked,
  type CreateMachinePool,
  dockerHostOf,
  MachinePool,
  patchedSettings,
  PoolSettings,
  providerObjectProblems,
  settingsOf,
  settingsProblems,
  type UpdateMachinePool
} from "../../domain/machines/MachinePools.ts"
import { Conflict, Forbidden, type Issue, InvalidRequest, NotFound, Unprocessable } from "../../domain/shared/Errors.ts"
import {
  type MachinePoolGrantId,
  MachinePoolId,
  type OrgId,
  type ProjectId,
  type SecretId
} from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { Grants } from "../configuration/Grants.ts"
import { Secrets } from "../configuration/Secrets.ts"
import { SecretsRepository } from "../configuration/SecretsRepository.ts"
import { constructor } from "../shared/Construct.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { NetworkPolicy } from "../shared/NetworkPolicy.ts"
import { paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access } from "../tenancy/Access.ts"
import { MachinePoolGrantsRepository } from "./MachinePoolGrantsRepository.ts"
import { MachinePoolsRepository, type StoredPool } from "./MachinePoolsRepository.ts"
import { ProviderChecks } from "./ProviderChecks.ts"

const makePool = constructor(MachinePool, Schema.Struct(MachinePool.fields))

/** The operator's cluster pools file declares a pool the server cannot install. */
export class ClusterPoolsRefused extends Schema.TaggedError<ClusterPoolsRefused>()("ClusterPoolsRefused", {
  details: Schema.String
}) {
  override get message() {
    return `AGENT_PLATFORM_CLUSTER_POOLS_FILE: ${this.details}`
  }
}

/** What installing the operator's pools did. */
export interface ClusterPoolsInstalled {
  readonly installed: number
  readonly updated: number
  readonly unchanged: number
  readonly removed: number
  /** `org_id/name` of declared pools whose name a tenant pool has taken. */
  readonly skipped: ReadonlyArray<string>
}

/** Usage until provisioning is built: no pool has machines. */
const NO_USAGE = { machines: 0, cpu: 0, memory_mb: 0 } as const

const encodeSettings = Schema.encodeSync(PoolSettings)
/** The settings as one comparable text (a create body sent again must match it). */
const settingsText = (settings: PoolSettings) => canonicalJson(encodeSettings(settings) as unknown as JsonValue)

const pointerKey = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1")

export class MachinePools extends Effect.Service<MachinePools>()("MachinePools", {
  effect: Effect.gen(function*() {
    const pools = yield* MachinePoolsRepository
    const poolGrants = yield* MachinePoolGrantsRepository
    const secretRows = yield* SecretsRepository
    const secrets = yield* Secrets
    const checks = yield* ProviderChecks
    const policy = yield* NetworkPolicy
    const grants = yield* Grants
    const access = yield* Access
    const ids = yield* IdGenerator
    const { transaction } = yield* Transactions

    const notFound = (poolId: MachinePoolId) => () => new NotFound({ error: `Machine pool ${poolId} not found` })

    const withUsage = (pool: StoredPool) => makePool({ ...pool, usage: NO_USAGE })
    const withoutUsage = (pool: StoredPool) => makePool(pool)

    /** Whether `secretId` is an organization secret of `orgId` (not a member's personal one). */
    const orgSecret = (orgId: OrgId, secretId: SecretId) =>
      Effect.map(secretRows.findVisible(orgId, secretId, null), Option.isSome)

    /** The problems with the secrets the settings name, and with the local provider's key when `checkKey`. */
    const secretProblems = (orgId: OrgId, settings: PoolSettings, checkKey: boolean) =>
      Effect.gen(function*() {
        const issues: Array<Issue> = []
        const authSecret = settings.provider_auth_secret_id
        const authOk = yield* orgSecret(orgId, authSecret)
        if (!authOk) {
          issues.push({
            path: "/provider_auth_secret_id",
            message: "must be the id of an organization secret of this organization (not a personal secret)"
          })
        }
        for (const [env, secretId] of Object.entries(settings.default_machine_secret_env)) {
          if (!(yield* orgSecret(orgId, secretId))) {
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
            new InvalidRequest({
              error: `The machine pool settings are not valid for the ${settings.provider} provider: ` +
                issues.map((issue) => `${issue.path} ${issue.message}`).join("; "),
              issues
            })
          )
        }
      })

    /** The pool made by this request (created) or the one the same body made before. */
    const create = (orgId: OrgId, input: CreateMachinePool) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        const settings = settingsOf(input)
        yield* validate(orgId, settings, true)
        const id = yield* ids.make(MachinePoolId)
        return yield* pools.insert({ id, org_id: orgId, management_kind: "tenant", settings }).pipe(
          Effect.map((pool) => ({ pool: withoutUsage(pool), created: true })),
          Effect.catchTag("UniqueViolation", () =>
            Effect.gen(function*() {
              const existing = yield* pools.named(orgId, settings.name).pipe(
                someOrFail(() => new Conflict({ error: `The organization has a machine pool named "${settings.name}" already` }))
              )
              if (existing.management_kind === "tenant" && settingsText(existing) === settingsText(settings)) {
                return { pool: withoutUsage(existing), created: false }
              }
              return yield* Effect.fail(
                new Conflict({
                  error: `The organization has a machine pool named "${settings.name}" (${existing.id}) with other settings; ` +
                    "pick another name, or change that pool with PATCH"
                })
              )
            }))
        )
      })

    const list = (orgId: OrgId, query: ListQuery) =>
      Effect.zipRight(
        access.orgRole(orgId),
        paged(query, (keyset) => Effect.map(pools.page(orgId, keyset), (rows) => rows.map(withUsage)), (pool) => pool.id)
      )

    const get = (orgId: OrgId, poolId: MachinePoolId) =>
      Effect.zipRight(
        access.orgRole(orgId),
        Effect.map(pools.find(orgId, poolId).pipe(someOrFail(notFound(poolId))), withUsage)
      )

    /** A pool the caller may change or delete: an org admin's, and tenant-managed. */
    const tenantManaged = (orgId: OrgId, poolId: MachinePoolId, action: string) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        const pool = yield* pools.find(orgId, poolId, "update").pipe(someOrFail(notFound(poolId)))
        if (pool.management_kind === "cluster") {
          return yield* Effect.fail(
            new Forbidden({
              error: `Machine pool ${poolId} is managed by the server's operator (management_kind cluster); ` +
                `it cannot be ${action} through the API`
            })
          )
        }
        return pool
      })

    const update = (orgId: OrgId, poolId: MachinePoolId, patch: UpdateMachinePool) =>
      transaction(Effect.gen(function*() {
        const current = yield* tenantManaged(orgId, poolId, "changed")
        const settings = patchedSettings(current, patch)
        yield* validate(orgId, settings, patch.provider_auth_secret_id !== undefined)
        const updated = yield* pools.update(poolId, settings).pipe(
          replaceFailure(
            "UniqueViolation",
            () => new Conflict({ error: `The organization has a machine pool named "${settings.name}" already` }),
            "Debug"
          )
        )
        return withoutUsage(updated)
      }))

    /** Deletes the pool and its grants. (Once provisioning is built, its machines go first.) */
    const remove = (orgId: OrgId, poolId: MachinePoolId) =>
      transaction(Effect.gen(function*() {
        yield* tenantManaged(orgId, poolId, "deleted")
        const removed = yield* pools.remove(orgId, poolId)
        if (!removed) return yield* Effect.fail(notFound(poolId)())
      }))

    const grantable = (orgId: OrgId, poolId: MachinePoolId) =>
      Effect.zipRight(access.requireOrgRole(orgId, "admin"), pools.find(orgId, poolId).pipe(someOrFail(notFound(poolId))))

    const createGrant = (orgId: OrgId, poolId: MachinePoolId, input: CreateGrant) =>
      Effect.zipRight(grantable(orgId, poolId), grants.create(poolGrants, orgId, poolId, input))

    const listGrants = (orgId: OrgId, poolId: MachinePoolId, query: ListQuery) =>
      Effect.zipRight(get(orgId, poolId), grants.list(poolGrants, poolId, query))

    const removeGrant = (orgId: OrgId, poolId: MachinePoolId, grantId: MachinePoolGrantId) =>
      Effect.zipRight(grantable(orgId, poolId), grants.remove(poolGrants, poolId, grantId))

    /** Which of `poolIds` are pools of the organization granted to the project. */
    const usableByProject = (orgId: OrgId, projectId: ProjectId, poolIds: ReadonlyArray<MachinePoolId>) =>
      Effect.gen(function*() {
        const owned = yield* pools.inOrg(orgId, poolIds)
        const granted = yield* poolGrants.grantedAmong(projectId, [...owned])
        return granted
      })

    /** Read-only requests to the provider with this credential and config. */
    const checkConnection = (orgId: OrgId, input: CheckConnection) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        const config = input.provider_config ?? {}
        const options = input.default_machine_provider_options ?? {}
        const issues = [
          ...providerObjectProblems(input.provider, config, options),
          ...hostProblems({ provider: input.provider, provider_config: config })
        ]
        if (!(yield* orgSecret(orgId, input.provider_auth_secret_id))) {
          issues.push({
            path: "/provider_auth_secret_id",
            message: "must be the id of an organization secret of this organization (not a personal secret)"
          })
        }
        if (issues.length > 0) {
          return yield* Effect.fail(
            new InvalidRequest({
              error: "The connection check request is not valid: " +
                issues.map((issue) => `${issue.path} ${issue.message}`).join("; "),
              issues
            })
          )
        }
        const details = yield* (input.provider === "local"
          ? Effect.flatMap(secrets.reveal(input.provider_auth_secret_id), checks.local)
          : checks.docker(dockerHostOf(config), options.image as string)).pipe(
            Effect.catchTag("ProviderCheckFailed", (failed) =>
              Effect.fail(
                new Unprocessable({
                  error: `The ${input.provider} provider did not accept the credential or the config`,
                  details: failed.details
                })
              ))
          )
        const checked: ConnectionChecked = { ok: true, provider: input.provider, details }
        return checked
      })

    /**
     * Installs the operator's pools (start-up): each declared pool is made or brought up to date
     * as a `cluster` pool; a cluster pool no longer declared is deleted; a declared name taken by
     * a tenant pool is skipped (and reported). All or nothing: one invalid entry refuses the file.
     */
    const installClusterPools = (file: ClusterPoolsFile) =>
      transaction(Effect.gen(function*() {
        const declared = new Set<string>()
        let installed = 0, updated = 0, unchanged = 0, removed = 0
        const skipped: Array<string> = []
        for (const [index, entry] of file.pools.entries()) {
          const { org_id: orgId, ...body } = entry
          const key = `${orgId}/${body.name}`
          if (declared.has(key)) {
            return yield* Effect.fail(new ClusterPoolsRefused({ details: `pools[${index}]: ${key} is declared twice` }))
          }
          declared.add(key)
          const settings = settingsOf(body)
          yield* validate(orgId, settings, true).pipe(
            Effect.mapError((invalid) => new ClusterPoolsRefused({ details: `pools[${index}] (${key}): ${invalid.error}` }))
          )
          const existing = yield* pools.named(orgId, settings.name)
          if (Option.isNone(existing)) {
            const id = yield* ids.make(MachinePoolId)
            yield* Effect.orDie(pools.insert({ id, org_id: orgId, management_kind: "cluster", settings }))
            installed++
          } else if (existing.value.management_kind === "tenant") {
            skipped.push(key)
          } else if (settingsText(existing.value) === settingsText(settings)) {
            unchanged++
          } else {
            yield* Effect.orDie(pools.update(existing.value.id, settings))
            updated++
          }
        }
        for (const pool of yield* pools.clusterPools()) {
          if (!declared.has(`${pool.org_id}/${pool.name}`)) {
            yield* pools.remove(pool.org_id, pool.id)
            removed++
          }
        }
        const result: ClusterPoolsInstalled = { installed, updated, unchanged, removed, skipped }
        return result
      }))

    return {
      installClusterPools,
      create,
      list,
      get,
      update,
      remove,
      createGrant,
      listGrants,
      removeGrant,
      usableByProject,
      checkConnection
    } as const
  }),
  dependencies: [
    MachinePoolsRepository.Default,
    MachinePoolGrantsRepository.Default,
    SecretsRepository.Default,
    Secrets.Default,
    ProviderChecks.Default,
    NetworkPolicy.Default,
    Grants.Default,
    Access.Default,
    IdGenerator.Default,
    Transactions.Default
  ]
}) {}
