/**
 * Daemon tokens (org admins): created with the token shown once, only its SHA-256 stored, like
 * API keys. Deleting one revokes it at once: registrations with it are refused, its machines'
 * tokens are no longer refreshed, and their connections on this process are closed (`revoked`);
 * other processes close theirs at the next heartbeat.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { type CreateDaemonToken, CreatedDaemonToken } from "../../domain/machines/DaemonTokens.ts"
import { InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import { DaemonTokenId, type OrgId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { newBearerToken } from "../shared/BearerTokens.ts"
import { sha256Hex } from "../shared/Hash.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Access } from "../tenancy/Access.ts"
import { DaemonTokensRepository } from "./DaemonTokensRepository.ts"
import { MachineHub } from "./MachineHub.ts"

/** The prefix that tells a daemon token from an API key. */
export const DAEMON_TOKEN_PREFIX = "dtk_"

const make = Effect.gen(function*() {
  const tokens = yield* DaemonTokensRepository
  const access = yield* Access
  const ids = yield* IdGenerator
  const hub = yield* MachineHub

  const create = (orgId: OrgId, input: CreateDaemonToken) =>
    Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      const expiresAt = input.expires_at ?? null
      if (expiresAt !== null && expiresAt.getTime() <= (yield* Clock.currentTimeMillis)) {
        return yield* Effect.fail(
          new InvalidRequest({
            error: "expires_at is in the past; give a time in the future, or none for a token that does not expire",
            issues: [{ path: "/expires_at", message: "must be in the future" }]
          })
        )
      }
      const token = newBearerToken(DAEMON_TOKEN_PREFIX)
      const stored = yield* tokens.insert({
        id: yield* ids.make(DaemonTokenId),
        org_id: orgId,
        name: input.name,
        token_hash: sha256Hex(token),
        expires_at: expiresAt
      })
      return new CreatedDaemonToken({ ...stored, token })
    })

  const list = (orgId: OrgId, query: ListQuery) =>
    Effect.andThen(
      access.requireOrgRole(orgId, "admin"),
      paged(listOf("daemon tokens", orgId), query, (keyset) => tokens.page(orgId, keyset), (token) => token.id)
    )

  const remove = (orgId: OrgId, tokenId: DaemonTokenId) =>
    Effect.gen(function*() {
      yield* access.requireOrgRole(orgId, "admin")
      if (!(yield* tokens.remove(orgId, tokenId))) {
        return yield* Effect.fail(new NotFound({ error: `Daemon token ${tokenId} not found` }))
      }
      yield* hub.credentialRevoked(tokenId)
    })

  /** The organization of a valid daemon token (its use recorded). */
  const authenticate = (token: string) =>
    Effect.map(tokens.use(sha256Hex(token)), Option.map((row) => ({ tokenId: row.id, orgId: row.org_id })))

  return { create, list, remove, authenticate, isValid: tokens.isValid } as const
})

export class DaemonTokens extends Context.Service<DaemonTokens, Effect.Success<typeof make>>()("DaemonTokens") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      DaemonTokensRepository.layer,
      Access.layer,
      IdGenerator.layer,
      MachineHub.layer
    ])
  )
}
