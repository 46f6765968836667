/**
 * API keys: personal keys act as their user; organization keys act for their organization
 * only, with the key's role. A token is shown once, at creation; only its SHA-256 hash is
 * stored, and requests are authenticated by looking the hash up. Deleting a key revokes it at
 * once: there is no cache between a request and the table.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { AuthenticationUnavailable, NotFound, Unauthorized } from "../../domain/shared/Errors.ts"
import { ApiKeyId, type OrgId, type UserId } from "../../domain/shared/Ids.ts"
import {
  type AssignableRole,
  CreatedOrganizationApiKey,
  OrganizationApiKey
} from "../../domain/tenancy/Organizations.ts"
import { type ListQuery, mapPage, toPage } from "../../domain/shared/Pagination.ts"
import { CreatedPersonalApiKey, PersonalApiKey } from "../../domain/tenancy/Users.ts"
import type { Principal } from "../../domain/tenancy/Principal.ts"
import { pageRequest } from "../shared/Paging.ts"
import { firstOr } from "../shared/Sql.ts"

const TOKEN_PREFIX = "apk_"

export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex")

const trusted = { disableValidation: true } as const

const newToken = (): string => TOKEN_PREFIX + randomBytes(32).toString("base64url")

interface KeyRow {
  readonly id: ApiKeyId
  readonly name: string
  readonly org_id: OrgId | null
  readonly role: AssignableRole | null
  readonly created_at: Date
}

export class ApiKeys extends Effect.Service<ApiKeys>()("ApiKeys", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const authenticate = (token: string): Effect.Effect<Principal, Unauthorized | AuthenticationUnavailable> =>
      token.length === 0
        ? Effect.fail(new Unauthorized({ error: "Send an API key as 'Authorization: Bearer <token>'" }))
        : sql<{ id: ApiKeyId; user_id: UserId | null; org_id: OrgId | null; role: AssignableRole | null }>`
          SELECT id, user_id, org_id, role FROM api_keys WHERE token_hash = ${hashToken(token)}`.pipe(
          Effect.mapError(() =>
            new AuthenticationUnavailable({ error: "Authentication is unavailable right now; retry shortly" })
          ),
          Effect.flatMap((rows) => {
            const key = rows[0]
            if (key === undefined) {
              return Effect.fail(new Unauthorized({ error: "The API key is not valid or has been revoked" }))
            }
            return Effect.succeed<Principal>(
              key.user_id !== null
                ? { kind: "user", userId: key.user_id, keyId: key.id }
                : { kind: "organization", orgId: key.org_id!, role: key.role!, keyId: key.id }
            )
          })
        )

    const insert = (owner: { userId: UserId } | { orgId: OrgId; role: AssignableRole }, name: string, token: string) =>
      sql<KeyRow>`
        INSERT INTO api_keys ${
        sql.insert({
          id: ApiKeyId.make(),
          token_hash: hashToken(token),
          name,
          user_id: "userId" in owner ? owner.userId : null,
          org_id: "orgId" in owner ? owner.orgId : null,
          role: "orgId" in owner ? owner.role : null
        })
      }
        RETURNING id, name, org_id, role, created_at`.pipe(
        Effect.map((rows) => ({ ...rows[0], token })),
        Effect.orDie
      )

    const listRows = (owner: { userId: UserId } | { orgId: OrgId }, query: ListQuery) =>
      Effect.gen(function*() {
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<KeyRow>`
          SELECT id, name, org_id, role, created_at FROM api_keys
          WHERE ${"userId" in owner ? sql`user_id = ${owner.userId}` : sql`org_id = ${owner.orgId}`}
          ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows, limit, (row) => row.id)
      })

    const remove = (owner: { userId: UserId } | { orgId: OrgId }, keyId: ApiKeyId) =>
      sql`
        DELETE FROM api_keys WHERE id = ${keyId}
        AND ${"userId" in owner ? sql`user_id = ${owner.userId}` : sql`org_id = ${owner.orgId}`}
        RETURNING id`.pipe(
        Effect.orDie,
        Effect.flatMap(firstOr(() => new NotFound({ error: `API key ${keyId} not found` }))),
        Effect.asVoid
      )

    /** Makes `token` a personal key of the user named `name`, replacing that user's earlier key of the same name. */
    const ensurePersonalToken = (userId: UserId, name: string, token: string) =>
      sql.withTransaction(
        Effect.gen(function*() {
          const existing = yield* sql<{ user_id: UserId | null }>`
            SELECT user_id FROM api_keys WHERE token_hash = ${hashToken(token)}`
          if (existing.length > 0 && existing[0].user_id === userId) return Option.none()
          yield* sql`DELETE FROM api_keys WHERE user_id = ${userId} AND name = ${name}`
          yield* sql`DELETE FROM api_keys WHERE token_hash = ${hashToken(token)}`
          return Option.some(yield* insert({ userId }, name, token))
        })
      ).pipe(Effect.orDie)

    return {
      authenticate,
      createPersonal: (userId: UserId, name: string) =>
        Effect.map(insert({ userId }, name, newToken()), (key) => new CreatedPersonalApiKey(key, trusted)),
      createForOrganization: (orgId: OrgId, name: string, role: AssignableRole) =>
        Effect.map(insert({ orgId, role }, name, newToken()), (key) => new CreatedOrganizationApiKey(key as CreatedOrganizationApiKey, trusted)),
      listPersonal: (userId: UserId, query: ListQuery) =>
        Effect.map(listRows({ userId }, query), mapPage((key) => new PersonalApiKey(key, trusted))),
      listForOrganization: (orgId: OrgId, query: ListQuery) =>
        Effect.map(listRows({ orgId }, query), mapPage((key) => new OrganizationApiKey(key as OrganizationApiKey, trusted))),
      remove,
      ensurePersonalToken
    } as const
  })
}) {}
