/**
 * Secrets (docs/secrets.md): organization secrets, managed by org admins and visible to every
 * member as metadata; personal secrets, visible to and managed by their owner only. Values are
 * sealed with AES-256-GCM (SecretBox.ts) and only `reveal` and `revealCurrent` open them, for the
 * runtime.
 */
import { Cache, Context, Duration, Effect, Exit, Layer, Option, Redacted, Result, Schema } from "effect"
import type { CreateSecret } from "../../domain/configuration/Secrets.ts"
import { Conflict, NotFound } from "../../domain/shared/Errors.ts"
import { type OrgId, type ProjectId, SecretId, type UserId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { SecretKey } from "../../layers/SecretKey.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import type { RowLock } from "../shared/Sql.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access } from "../tenancy/Access.ts"
import { Grants, personalNotGranted } from "./Grants.ts"
import { open, seal } from "./SecretBox.ts"
import { SecretGrantsRepository } from "./SecretGrantsRepository.ts"
import { describeReferrer, SecretReferences } from "./SecretReferences.ts"
import { SecretsRepository, type SecretVersion } from "./SecretsRepository.ts"

/** A stored secret value that the configured key does not open. */
export class SecretUndecryptable extends Schema.TaggedError<SecretUndecryptable>()("SecretUndecryptable", {
  secret_id: SecretId,
  reason: Schema.String
}) {
  override get message() {
    return `Secret ${this.secret_id} does not decrypt with the configured key (${this.reason}); ` +
      "was AGENT_PLATFORM_SECRET_KEY changed?"
  }
}

/** Secrets whose opened value `revealCurrent` keeps at most (least recently used forgotten first). */
export const OPENED_CACHE_SIZE = 1000

const make = Effect.gen(function*() {
  const secrets = yield* SecretsRepository
  const secretGrants = yield* SecretGrantsRepository
  const references = yield* SecretReferences
  const grants = yield* Grants
  const access = yield* Access
  const ids = yield* IdGenerator
  const key = yield* SecretKey
  const { transaction } = yield* Transactions

  const notFound = (secretId: SecretId) => () => new NotFound({ error: `Secret ${secretId} not found` })
  const nameTaken = (name: string, personal: boolean) => () =>
    new Conflict({
      error: personal
        ? `You have a personal secret named "${name}" in this organization already; pick another name or rotate its value`
        : `The organization has a secret named "${name}" already; pick another name or rotate its value`
    })

  /**
   * A secret of the organization the caller may see: an organization secret, or one of the
   * caller's personal secrets. `lock` holds the row until the transaction ends.
   */
  const visible = (orgId: OrgId, secretId: SecretId, lock: RowLock = "none") =>
    Effect.gen(function*() {
      yield* access.orgRole(orgId)
      const userId = yield* access.callerUserId
      return yield* secrets.findVisible(orgId, secretId, userId, lock).pipe(someOrFail(notFound(secretId)))
    })

  /** A visible secret the caller may change: org admins change organization secrets, owners their own. */
  const manageable = (orgId: OrgId, secretId: SecretId, lock: RowLock = "none") =>
    Effect.gen(function*() {
      const secret = yield* visible(orgId, secretId, lock)
      if (secret.owner === "organization") yield* access.requireOrgRole(orgId, "admin")
      return secret
    })

  const create = (orgId: OrgId, input: CreateSecret) =>
    Effect.gen(function*() {
      const personal = input.owner === "personal"
      const ownerUserId = personal ? yield* access.requireUser : null
      if (personal) yield* access.orgRole(orgId)
      else yield* access.requireOrgRole(orgId, "admin")
      const id = yield* ids.make(SecretId)
      return yield* secrets.insert({
        id,
        org_id: orgId,
        owner_user_id: ownerUserId,
        name: input.name,
        description: input.description ?? null,
        value_sealed: seal(key, input.value, id)
      }).pipe(replaceFailure("UniqueViolation", nameTaken(input.name, personal), "Debug"))
    })

  const list = (orgId: OrgId, query: ListQuery) =>
    Effect.gen(function*() {
      yield* access.orgRole(orgId)
      const userId = yield* access.callerUserId
      return yield* paged(
        listOf("secrets", orgId, userId),
        query,
        (keyset) => secrets.page(orgId, userId, keyset),
        (secret) => secret.id
      )
    })

  const get = (orgId: OrgId, secretId: SecretId) => visible(orgId, secretId)

  const rotate = (orgId: OrgId, secretId: SecretId, value: Redacted.Redacted<string>) =>
    Effect.andThen(
      manageable(orgId, secretId),
      secrets.rotate(secretId, seal(key, value, secretId)).pipe(someOrFail(notFound(secretId)))
    )

  const remove = (orgId: OrgId, secretId: SecretId) =>
    transaction(Effect.gen(function*() {
      yield* manageable(orgId, secretId, "update")
      const referrers = yield* references.referrersOf([secretId])
      if (referrers.length > 0) {
        return yield* Effect.fail(
          new Conflict({
            error: `Secret ${secretId} is used by ${referrers.map(describeReferrer).join(", ")}; ` +
              `point them at another secret or delete them first`
          })
        )
      }
      yield* secrets.remove(secretId)
    }))

  /** Only organization secrets are granted; a personal secret is usable by its owner alone. */
  const grantable = (orgId: OrgId, secretId: SecretId) =>
    Effect.gen(function*() {
      const secret = yield* manageable(orgId, secretId)
      if (secret.owner === "personal") {
        return yield* Effect.fail(personalNotGranted("Secret", secretId))
      }
      return secret
    })

  const { createGrant, listGrants, removeGrant } = grants.operations(secretGrants, { grantable, visible })

  /**
   * The secret `name` as a project sees it: the personal secret of `userId` in the
   * organization when there is one (it is the more specific), else an organization secret
   * granted to the project.
   */
  const resolveForProject = (orgId: OrgId, projectId: ProjectId, userId: UserId | null, name: string) =>
    Effect.gen(function*() {
      const named = yield* secrets.named(orgId, name.normalize("NFC"))
      const personal = named.find((secret) => secret.owner_user_id !== null && secret.owner_user_id === userId)
      if (personal !== undefined) return Option.some({ id: personal.id })
      const organization = named.find((secret) => secret.owner === "organization")
      if (organization === undefined) return Option.none()
      const granted = yield* secretGrants.grantedAmong(projectId, [organization.id])
      return granted.has(organization.id) ? Option.some({ id: organization.id }) : Option.none()
    })

  /** The decrypted value with its version. */
  const revealVersioned = (secretId: SecretId) =>
    Effect.gen(function*() {
      const { value_sealed, version } = yield* secrets.sealedValue(secretId).pipe(someOrFail(notFound(secretId)))
      const value = yield* Result.match(open(key, value_sealed, secretId), {
        onFailure: (unreadable) => Effect.die(new SecretUndecryptable({ secret_id: secretId, reason: unreadable.reason })),
        onSuccess: Effect.succeed
      })
      return { value, version }
    })

  /** The decrypted value, for the runtime only (provider API keys, machine environments). */
  const reveal = (secretId: SecretId) => Effect.map(revealVersioned(secretId), ({ value }) => value)

  /** The values `revealCurrent` opened, one version a secret; a failed read is not kept. */
  const opened = yield* Cache.makeWith(revealVersioned, {
    capacity: OPENED_CACHE_SIZE,
    timeToLive: (exit) => Exit.isSuccess(exit) ? Duration.infinity : Duration.zero
  })

  /**
   * The decrypted value at `version` (SecretsRepository.SecretVersion, which the model's read
   * for a call reads with it), for the model calls of the runtime: from memory when this process
   * opened that version before, else read, opened and kept in place of the one it held. The value
   * read is newer when the secret changed again meanwhile; that one is returned.
   */
  const revealCurrent = (secretId: SecretId, version: SecretVersion) =>
    Effect.gen(function*() {
      const held = yield* Cache.get(opened, secretId)
      if (held.version === version) return held.value
      yield* Cache.invalidate(opened, secretId)
      return (yield* Cache.get(opened, secretId)).value
    })

  return {
    create,
    list,
    get,
    rotate,
    remove,
    createGrant,
    listGrants,
    removeGrant,
    visible,
    resolveForProject,
    reveal,
    revealCurrent
  } as const
})

export class Secrets extends Context.Service<Secrets, Effect.Success<typeof make>>()("Secrets") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      SecretsRepository.layer,
      SecretGrantsRepository.layer,
      SecretReferences.layer,
      Grants.layer,
      Access.layer,
      IdGenerator.layer,
      SecretKey.layer,
      Transactions.layer
    ])
  )
}
