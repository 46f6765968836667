/**
 * Secrets (docs/secrets.md): organization secrets, managed by org admins and visible to every
 * member as metadata; personal secrets, visible to and managed by their owner only. Values are
 * sealed with AES-256-GCM (SecretBox) and only `reveal` opens them, for the runtime.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import { Conflict, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import type { CreateGrant } from "../../domain/configuration/Grants.ts"
import { type OrgId, type ProjectId, SecretGrantId, SecretId, type UserId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { toPage } from "../../domain/shared/Pagination.ts"
import { CurrentPrincipal } from "../../domain/tenancy/Principal.ts"
import { type CreateSecret, Secret, SecretGrant } from "../../domain/configuration/Secrets.ts"
import { SecretKey } from "../../layers/SecretKey.ts"
import { Access } from "../tenancy/Access.ts"
import { grantStore } from "./Grants.ts"
import { MemberRemovalGuards } from "../tenancy/MemberRemovalGuards.ts"
import { pageRequest } from "../shared/Paging.ts"
import { open, seal } from "./SecretBox.ts"
import { firstOr, onDuplicate } from "../shared/Sql.ts"

interface SecretRow {
  readonly id: SecretId
  readonly org_id: OrgId
  readonly owner_user_id: UserId | null
  readonly name: string
  readonly description: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

interface GrantRow {
  readonly id: SecretGrantId
  readonly org_id: OrgId
  readonly secret_id: SecretId
  readonly target_project_id: ProjectId
  readonly created_at: Date
}

const toSecret = (row: SecretRow) =>
  new Secret({ ...row, owner: row.owner_user_id === null ? "organization" : "personal" }, { disableValidation: true })
const toGrant = (row: GrantRow) => new SecretGrant(row, { disableValidation: true })

const notFound = (secretId: SecretId) => () => new NotFound({ error: `Secret ${secretId} not found` })
const nameTaken = (name: string, personal: boolean) => () =>
  new Conflict({
    error: personal
      ? `You have a personal secret named "${name}" in this organization already; pick another name or rotate its value`
      : `The organization has a secret named "${name}" already; pick another name or rotate its value`
  })

/** A model provider config (or, later, another resource) that holds a secret. */
interface Referrer {
  readonly secret_id: SecretId
  readonly secret_name: string
  readonly kind: string
  readonly id: string
  readonly name: string
}

const describeReferrer = (referrer: Referrer) => `${referrer.kind} "${referrer.name}" (${referrer.id})`

export class Secrets extends Effect.Service<Secrets>()("Secrets", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const grants = grantStore(sql, {
      table: "secret_grants",
      resourceColumn: "secret_id",
      resourceLabel: "Secret",
      newId: SecretGrantId.make,
      toGrant
    })
    const access = yield* Access
    const guards = yield* MemberRemovalGuards
    const key = yield* SecretKey

    const callerUserId = Effect.map(
      CurrentPrincipal,
      (principal): UserId | null => principal.kind === "user" ? principal.userId : null
    )

    const selectSecret = sql`SELECT id, org_id, owner_user_id, name, description, created_at, updated_at FROM secrets`

    /**
     * A secret of the organization the caller may see: an organization secret, or one of the
     * caller's personal secrets. `lock` holds the row until the transaction ends.
     */
    const visible = (orgId: OrgId, secretId: SecretId, lock: "none" | "share" | "update" = "none") =>
      Effect.gen(function*() {
        yield* access.orgRole(orgId)
        const userId = yield* callerUserId
        const rows = yield* sql<SecretRow>`
          ${selectSecret}
          WHERE id = ${secretId} AND org_id = ${orgId} AND (owner_user_id IS NULL OR owner_user_id = ${userId})
          ${lock === "share" ? sql`FOR SHARE` : lock === "update" ? sql`FOR UPDATE` : sql``}`.pipe(Effect.orDie)
        return yield* firstOr(notFound(secretId))(rows)
      })

    /** A visible secret the caller may change: org admins change organization secrets, owners their own. */
    const manageable = (orgId: OrgId, secretId: SecretId, lock: "none" | "update" = "none") =>
      Effect.gen(function*() {
        const row = yield* visible(orgId, secretId, lock)
        if (row.owner_user_id === null) yield* access.requireOrgRole(orgId, "admin")
        return row
      })

    /** Everything that holds one of these secrets, named for a `conflict` message. */
    const referrersOf = (secretIds: ReadonlyArray<SecretId>) =>
      secretIds.length === 0
        ? Effect.succeed<ReadonlyArray<Referrer>>([])
        : sql<Referrer>`
          SELECT s.id AS secret_id, s.name AS secret_name, 'model provider config' AS kind, c.id, c.name
          FROM model_provider_configs c JOIN secrets s ON s.id = c.auth_secret_id
          WHERE c.auth_secret_id IN ${sql.in(secretIds)}
          ORDER BY c.id`.pipe(Effect.orDie)

    yield* guards.register((orgId, userId) =>
      Effect.gen(function*() {
        const personal = yield* sql<{ id: SecretId }>`
          SELECT id FROM secrets WHERE org_id = ${orgId} AND owner_user_id = ${userId}`.pipe(Effect.orDie)
        const referrers = yield* referrersOf(personal.map((row) => row.id))
        return referrers.map((referrer) =>
          `personal secret "${referrer.secret_name}" (${referrer.secret_id}) is used by ${describeReferrer(referrer)}; ` +
          `point it at another secret first`
        )
      })
    )

    const create = (orgId: OrgId, input: CreateSecret) =>
      Effect.gen(function*() {
        const personal = input.owner === "personal"
        const ownerUserId = personal ? yield* access.requireUser : null
        if (personal) yield* access.orgRole(orgId)
        else yield* access.requireOrgRole(orgId, "admin")
        const id = SecretId.make()
        const rows = yield* sql<SecretRow>`
          INSERT INTO secrets ${
          sql.insert({
            id,
            org_id: orgId,
            owner_user_id: ownerUserId,
            name: input.name,
            description: input.description ?? null,
            value_sealed: seal(key, input.value, id)
          })
        }
          RETURNING id, org_id, owner_user_id, name, description, created_at, updated_at`.pipe(
          onDuplicate(nameTaken(input.name, personal))
        )
        return toSecret(rows[0])
      })

    const list = (orgId: OrgId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* access.orgRole(orgId)
        const userId = yield* callerUserId
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<SecretRow>`
          ${selectSecret}
          WHERE org_id = ${orgId} AND (owner_user_id IS NULL OR owner_user_id = ${userId})
          ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toSecret), limit, (secret) => secret.id)
      })

    const get = (orgId: OrgId, secretId: SecretId) => Effect.map(visible(orgId, secretId), toSecret)

    const rotate = (orgId: OrgId, secretId: SecretId, value: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        yield* manageable(orgId, secretId)
        const rows = yield* sql<SecretRow>`
          UPDATE secrets SET value_sealed = ${seal(key, value, secretId)}, updated_at = now()
          WHERE id = ${secretId}
          RETURNING id, org_id, owner_user_id, name, description, created_at, updated_at`.pipe(Effect.orDie)
        return toSecret(yield* firstOr(notFound(secretId))(rows))
      })

    const remove = (orgId: OrgId, secretId: SecretId) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* manageable(orgId, secretId, "update")
        const referrers = yield* referrersOf([secretId])
        if (referrers.length > 0) {
          return yield* Effect.fail(
            new Conflict({
              error: `Secret ${secretId} is used by ${referrers.map(describeReferrer).join(", ")}; ` +
                `point them at another secret or delete them first`
            })
          )
        }
        yield* sql`DELETE FROM secrets WHERE id = ${secretId}`
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    /** Only organization secrets are granted; a personal secret is usable by its owner alone. */
    const grantable = (orgId: OrgId, secretId: SecretId) =>
      Effect.gen(function*() {
        const row = yield* manageable(orgId, secretId)
        if (row.owner_user_id !== null) {
          return yield* Effect.fail(
            new InvalidRequest({
              error: `Secret ${secretId} is a personal secret: it is usable by its owner in every project of ` +
                `the organization and is not granted to projects`
            })
          )
        }
        return row
      })

    const createGrant = (orgId: OrgId, secretId: SecretId, input: CreateGrant) =>
      Effect.zipRight(grantable(orgId, secretId), grants.create(orgId, secretId, input.target_project_id))

    const listGrants = (orgId: OrgId, secretId: SecretId, query: ListQuery) =>
      Effect.zipRight(visible(orgId, secretId), grants.list(secretId, query))

    const removeGrant = (orgId: OrgId, secretId: SecretId, grantId: SecretGrantId) =>
      Effect.zipRight(grantable(orgId, secretId), grants.remove(secretId, grantId))

    /**
     * The secret `name` as a project sees it: the personal secret of `userId` in the
     * organization when there is one (it is the more specific), else an organization secret
     * granted to the project.
     */
    const resolveForProject = (orgId: OrgId, projectId: ProjectId, userId: UserId | null, name: string) =>
      sql<{ id: SecretId }>`
        SELECT s.id FROM secrets s
        WHERE s.org_id = ${orgId} AND s.name = ${name.normalize("NFC")} AND (
          s.owner_user_id = ${userId} OR (
            s.owner_user_id IS NULL AND EXISTS (
              SELECT 1 FROM secret_grants g WHERE g.secret_id = s.id AND g.target_project_id = ${projectId})))
        ORDER BY s.owner_user_id IS NULL LIMIT 1`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map(({ id }) => ({ id })))),
        Effect.orDie
      )

    /** The decrypted value, for the runtime only (provider API keys, machine environments). */
    const reveal = (secretId: SecretId) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ value_sealed: string }>`
          SELECT value_sealed FROM secrets WHERE id = ${secretId}`.pipe(Effect.orDie)
        const row = yield* firstOr(notFound(secretId))(rows)
        return yield* Effect.try({
          try: () => open(key, row.value_sealed, secretId),
          catch: () =>
            new Error(
              `Secret ${secretId} does not decrypt with the configured key; was AGENT_PLATFORM_SECRET_KEY changed?`
            )
        }).pipe(Effect.orDie)
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
      reveal
    } as const
  })
}) {}
