/**
 * API keys (src/domain/tenancy/ApiKeys.ts). A token is shown once, at creation; only its SHA-256
 * is stored, and requests are authenticated by looking the hash up. Deleting a key revokes it at
 * once: on Postgres every request reads its key; on the embedded database the principals read are
 * kept until the next change to the tables they were read from (PrincipalCache), which forgets
 * them before the change's request is answered.
 */
import type { SqlError } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { AuthenticationUnavailable, Conflict, NotFound, Unauthorized } from "../../domain/shared/Errors.ts"
import { ApiKeyId, OrgId, ProjectId, type UserId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { CreatedOrganizationApiKey, CreatedPersonalApiKey } from "../../domain/tenancy/ApiKeys.ts"
import type { AssignableRole } from "../../domain/tenancy/Members.ts"
import type { Principal } from "../../domain/tenancy/Principal.ts"
import { newBearerToken } from "../shared/BearerTokens.ts"
import { replaceFailure } from "../shared/Failures.ts"
import { sha256Hex } from "../shared/Hash.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { withinOwnerLimit } from "../shared/OwnerLimits.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { ApiKeysRepository, type KeyOwner } from "./ApiKeysRepository.ts"
import { OrganizationsRepository } from "./OrganizationsRepository.ts"
import { PrincipalCache } from "./PrincipalCache.ts"
import { UsersRepository } from "./UsersRepository.ts"

const TOKEN_PREFIX = "apk_"

/**
 * The most API keys one user, or one organization, may have: far past any real use (a key per
 * service, per environment), and what bounds the keys table and the rate buckets kept per key
 * (KeyRateLimits) against a loop that creates them.
 */
export const MAX_API_KEYS_PER_OWNER = 1000

/** A database failure while a credential is looked up: 503, for the caller to retry. */
export const unavailableOnSqlError = replaceFailure("SqlError", () =>
  new AuthenticationUnavailable({ error: "Authentication is unavailable right now; retry shortly" }))

const principalOf = (key: KeyOwner): Principal =>
  key.user_id !== null
    ? { kind: "user", userId: key.user_id, keyId: key.id }
    : { kind: "organization", orgId: key.org_id, role: key.role, keyId: key.id }

/** The organization and project ids a request's path names, as sent. */
export interface RequestPath {
  readonly orgId?: string | undefined
  readonly projectId?: string | undefined
}

const isOrgId = Schema.is(OrgId)
const isProjectId = Schema.is(ProjectId)

const make = Effect.gen(function*() {
  const keys = yield* ApiKeysRepository
  const users = yield* UsersRepository
  const organizations = yield* OrganizationsRepository
  const principals = yield* PrincipalCache
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions

  /** Whom the key of token hash `hash` acts for, with its caller's standing in the organization and project of the request's path. */
  const lookUp = (hash: string, path: RequestPath): Effect.Effect<Option.Option<Principal>, SqlError.SqlError> => {
    // An id that is not well formed is not looked up: the route answers 400 for it.
    if (!isOrgId(path.orgId)) return principals.through(hash, Effect.map(keys.findOwner(hash), Option.map(principalOf)))
    const orgId = path.orgId
    const projectId = isProjectId(path.projectId) ? path.projectId : undefined
    return principals.through(`${hash} ${orgId} ${projectId ?? ""}`, Effect.map(
      keys.findOwnerWithStanding(hash, orgId, projectId ?? null),
      Option.map(({ owner, standing }): Principal => ({
        ...principalOf(owner),
        standing: {
          orgId,
          projectId,
          role: standing.member_role,
          projectFound: standing.project_found,
          projectRole: standing.project_role
        }
      }))
    ))
  }

  /**
   * The caller a bearer token names. `path`: the organization and project ids of the
   * request's path, as sent (none for a route without them): the caller's standing there is
   * read in the same statement (Principal's `standing`, used by Access).
   */
  const authenticate = (
    token: string,
    path: RequestPath = {}
  ): Effect.Effect<Principal, Unauthorized | AuthenticationUnavailable> =>
    token.length === 0
      ? Effect.fail(new Unauthorized({ error: "Send an API key as 'Authorization: Bearer <token>'" }))
      : authenticateKeyHash(sha256Hex(token), path)

  /** The caller of the key whose token hash is `hash` (the key that opened a browser session), as `authenticate`. */
  const authenticateKeyHash = (
    hash: string,
    path: RequestPath = {}
  ): Effect.Effect<Principal, Unauthorized | AuthenticationUnavailable> =>
    lookUp(hash, path).pipe(
      unavailableOnSqlError,
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new Unauthorized({ error: "The API key is not valid or has been revoked" })),
        onSome: Effect.succeed
      }))
    )

  /**
   * Whom the key `keyId` acts for, while it exists: for a connection that outlives the request
   * that authenticated it (an event stream, a stream token) to check its key again.
   */
  const principalOfKey = (keyId: ApiKeyId): Effect.Effect<Option.Option<Principal>> =>
    Effect.map(keys.findOwnerById(keyId), Option.map(principalOf))

  const createPersonalWith = (userId: UserId, name: string, token: string) =>
    Effect.gen(function*() {
      const key = yield* keys.insertPersonal({
        id: yield* ids.make(ApiKeyId),
        token_hash: sha256Hex(token),
        name,
        user_id: userId
      })
      return new CreatedPersonalApiKey({ ...key, token })
    })

  /** `create`, refused with `conflict` when the owner has MAX_API_KEYS_PER_OWNER keys (OwnerLimits). */
  const withinKeyLimit = <A, E, R>(
    owner: { readonly userId: UserId } | { readonly orgId: OrgId },
    create: Effect.Effect<A, E, R>
  ) =>
    transaction(withinOwnerLimit({
      lockOwner: "userId" in owner ? users.lock(owner.userId) : organizations.lock(owner.orgId),
      count: keys.count(owner),
      max: MAX_API_KEYS_PER_OWNER,
      refusal: (count) =>
        new Conflict({
          error: `${"userId" in owner ? "You have" : "This organization has"} ${count} API keys, the most one may have; ` +
            "delete a key no longer used to make another"
        })
    }, create))

  const createPersonal = (userId: UserId, name: string) =>
    withinKeyLimit({ userId }, createPersonalWith(userId, name, newBearerToken(TOKEN_PREFIX)))

  const createForOrganization = (orgId: OrgId, name: string, role: AssignableRole) =>
    withinKeyLimit(
      { orgId },
      Effect.gen(function*() {
        const token = newBearerToken(TOKEN_PREFIX)
        const key = yield* keys.insertForOrganization({
          id: yield* ids.make(ApiKeyId),
          token_hash: sha256Hex(token),
          name,
          org_id: orgId,
          role
        })
        return new CreatedOrganizationApiKey({ ...key, token })
      })
    )

  const listPersonal = (userId: UserId, query: ListQuery) =>
    paged(listOf("personal API keys", userId), query, (keyset) => keys.pagePersonal(userId, keyset), (key) => key.id)

  const listForOrganization = (orgId: OrgId, query: ListQuery) =>
    paged(
      listOf("organization API keys", orgId),
      query,
      (keyset) => keys.pageForOrganization(orgId, keyset),
      (key) => key.id
    )

  const remove = (owner: { readonly userId: UserId } | { readonly orgId: OrgId }, keyId: ApiKeyId) =>
    Effect.flatMap(
      keys.remove(owner, keyId),
      (removed) => removed ? Effect.void : Effect.fail(new NotFound({ error: `API key ${keyId} not found` }))
    )

  /** Makes `token` a personal key of the user named `name`, replacing that user's earlier key of the same name. */
  const ensurePersonalToken = (userId: UserId, name: string, token: string) =>
    transaction(Effect.gen(function*() {
      const hash = sha256Hex(token)
      const existing = yield* keys.findOwner(hash).pipe(Effect.orDie)
      if (Option.isSome(existing) && existing.value.user_id === userId) return Option.none()
      yield* keys.deletePersonalNamed(userId, name)
      yield* keys.deleteByTokenHash(hash)
      return Option.some(yield* createPersonalWith(userId, name, token))
    }))

  return {
    authenticate,
    authenticateKeyHash,
    principalOfKey,
    createPersonal,
    createForOrganization,
    listPersonal,
    listForOrganization,
    remove,
    ensurePersonalToken
  } as const
})

export class ApiKeys extends Context.Service<ApiKeys, Effect.Success<typeof make>>()("ApiKeys") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ApiKeysRepository.layer,
      UsersRepository.layer,
      OrganizationsRepository.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
