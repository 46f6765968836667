/**
 * Machine pools (docs/machine-pools.md): org admins make, change and delete them and grant them
 * to projects; every member reads them. A pool's settings are checked against its provider
 * (required and refused size fields, the provider's objects, sizes against each other) and its
 * secrets must be organization secrets. `usage` counts the pool's machines that are not deleted
 * (PoolMachines starts and deletes them); deleting a pool deletes its machines first.
 */
import { Context, Effect, Layer } from "effect"
import {
  type CheckConnection,
  type ConnectionChecked,
  type CreateMachinePool,
  dockerHostOf,
  MachinePool,
  patchedSettings,
  providerObjectProblems,
  settingsOf,
  settingsText,
  type UpdateMachinePool
} from "../../domain/machines/MachinePools.ts"
import {
  Conflict,
  Forbidden,
  NotFound,
  PendingWork,
  Unprocessable
} from "../../domain/shared/Errors.ts"
import { invalidRequestWith } from "../../domain/shared/ListedIssues.ts"
import {
  MachinePoolId,
  type OrgId,
  type ProjectId
} from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { Grants } from "../configuration/Grants.ts"
import { Secrets } from "../configuration/Secrets.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access } from "../tenancy/Access.ts"
import { MachinePoolGrantsRepository } from "./MachinePoolGrantsRepository.ts"
import { MachinePoolsRepository, type StoredPool } from "./MachinePoolsRepository.ts"
import { MachineRequestsRepository } from "./MachineRequestsRepository.ts"
import { MachinesRepository } from "./MachinesRepository.ts"
import { PoolMachines } from "./PoolMachines.ts"
import { PoolSettingsValidation } from "./PoolSettingsValidation.ts"
import { ProviderChecks } from "./ProviderChecks.ts"

const NO_USAGE = { machines: 0, cpu: 0, memory_mb: 0 } as const

const make = Effect.gen(function*() {
  const pools = yield* MachinePoolsRepository
  const poolGrants = yield* MachinePoolGrantsRepository
  const secrets = yield* Secrets
  const checks = yield* ProviderChecks
  const grants = yield* Grants
  const access = yield* Access
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions
  const machines = yield* MachinesRepository
  const requests = yield* MachineRequestsRepository
  const poolMachines = yield* PoolMachines
  const validation = yield* PoolSettingsValidation

  const notFound = (poolId: MachinePoolId) => () => new NotFound({ error: `Machine pool ${poolId} not found` })

  /** The pools with their usage (read in one query). */
  const withUsage = (rows: ReadonlyArray<StoredPool>) =>
    Effect.map(machines.usage(rows.map((pool) => pool.id)), (usage) => {
      const byPool = new Map(usage.map((row) => [row.machine_pool_id, row]))
      return rows.map((pool) => {
        const used = byPool.get(pool.id)
        return new MachinePool({
          ...pool,
          usage: used === undefined ? NO_USAGE : { machines: used.machines, cpu: used.cpu, memory_mb: used.memory_mb }
        })
      })
    })
  const withoutUsage = (pool: StoredPool) => new MachinePool(pool)

  /** The pool made by this request (created) or the one the same body made before. */
  const create = (orgId: OrgId, input: CreateMachinePool) =>
    Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      const settings = settingsOf(input)
      yield* validation.validate(orgId, settings, true)
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
    Effect.andThen(
      access.orgRole(orgId),
      paged(
        listOf("machine pools", orgId),
        query,
        (keyset) => Effect.flatMap(pools.page(orgId, keyset), withUsage),
        (pool) => pool.id
      )
    )

  const get = (orgId: OrgId, poolId: MachinePoolId) =>
    Effect.andThen(
      access.orgRole(orgId),
      pools.find(orgId, poolId).pipe(
        someOrFail(notFound(poolId)),
        Effect.flatMap((pool) => withUsage([pool])),
        Effect.map(([pool]) => pool)
      )
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
      yield* validation.validate(orgId, settings, patch.provider_auth_secret_id !== undefined)
      const updated = yield* pools.update(poolId, settings).pipe(
        replaceFailure(
          "UniqueViolation",
          () => new Conflict({ error: `The organization has a machine pool named "${settings.name}" already` }),
          "Debug"
        )
      )
      return withoutUsage(updated)
    }))

  /**
   * Refused while a tool call runs on one of its machines (or waits for one); otherwise its
   * machines are deleted at the provider, then the pool and its grants.
   */
  const remove = (orgId: OrgId, poolId: MachinePoolId) =>
    Effect.gen(function*() {
      yield* transaction(Effect.gen(function*() {
        yield* tenantManaged(orgId, poolId, "deleted")
        if (yield* requests.toolCallRunningInPool(poolId)) {
          return yield* Effect.fail(
            new PendingWork({
              error: `A tool call runs on a machine of pool ${poolId} (or waits for one); ` +
                "cancel the agents' turns or wait for them to finish"
            })
          )
        }
        yield* poolMachines.markPoolDeleting(poolId, "its pool was deleted")
      }))
      yield* poolMachines.destroyPoolDeleting(poolId)
      yield* transaction(Effect.gen(function*() {
        yield* tenantManaged(orgId, poolId, "deleted")
        // A call admitted meanwhile (the pool row was not held while its machines were stopped).
        const arrived = (yield* requests.toolCallRunningInPool(poolId)) ||
          (yield* machines.poolMachines(poolId, ["provisioning", "running"])).length > 0
        if (arrived) {
          return yield* Effect.fail(
            new PendingWork({
              error: `Pool ${poolId} was given work while its machines were being deleted (a tool call, or an ` +
                "agent's initial machine); cancel the agents' turns or wait for them to finish, then delete the pool again"
            })
          )
        }
        if (!(yield* pools.remove(orgId, poolId))) return yield* Effect.fail(notFound(poolId)())
      }))
    })

  const grantable = (orgId: OrgId, poolId: MachinePoolId) =>
    Effect.andThen(access.requireOrgRole(orgId, "admin"), pools.find(orgId, poolId).pipe(someOrFail(notFound(poolId))))

  const { createGrant, listGrants, removeGrant } = grants.operations(poolGrants, { grantable, visible: get })

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
        ...validation.hostProblems({ provider: input.provider, provider_config: config })
      ]
      if (!(yield* validation.orgSecret(orgId, input.provider_auth_secret_id))) {
        issues.push({
          path: "/provider_auth_secret_id",
          message: "must be the id of an organization secret of this organization (not a personal secret)"
        })
      }
      if (issues.length > 0) {
        return yield* Effect.fail(invalidRequestWith("The connection check request is not valid", issues))
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

  return {
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
})

export class MachinePools extends Context.Service<MachinePools, Effect.Success<typeof make>>()("MachinePools") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MachinePoolsRepository.layer,
      MachinePoolGrantsRepository.layer,
      Secrets.layer,
      ProviderChecks.layer,
      PoolSettingsValidation.layer,
      Grants.layer,
      Access.layer,
      IdGenerator.layer,
      Transactions.layer,
      MachinesRepository.layer,
      MachineRequestsRepository.layer,
      PoolMachines.layer
    ])
  )
}
