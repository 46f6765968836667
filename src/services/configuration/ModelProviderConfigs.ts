/**
 * Model provider configs (docs/models.md): where a model is reached (API format, base URL) and
 * with which credential (a secret). Org admins manage them; every member can read them.
 * Cluster-managed configs are read-only here.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Conflict, Forbidden, InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import { type OrgId, ModelProviderConfigId, type SecretId } from "../../domain/shared/Ids.ts"
import {
  type ApiFormat,
  type CreateModelProviderConfig,
  type ManagementKind,
  ModelProviderConfig,
  type UpdateModelProviderConfig
} from "../../domain/configuration/Models.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { toPage } from "../../domain/shared/Pagination.ts"
import { Access } from "../tenancy/Access.ts"
import { pageRequest } from "../shared/Paging.ts"
import { Secrets } from "./Secrets.ts"
import { firstOr, onDuplicate } from "../shared/Sql.ts"

interface ProviderConfigRow {
  readonly id: ModelProviderConfigId
  readonly org_id: OrgId
  readonly name: string
  readonly description: string | null
  readonly api_format: ApiFormat
  readonly base_url: string
  readonly auth_secret_id: SecretId | null
  readonly management_kind: ManagementKind
  readonly created_at: Date
  readonly updated_at: Date
}

const COLUMNS = "id, org_id, name, description, api_format, base_url, auth_secret_id, management_kind, created_at, updated_at"

const toProviderConfig = (row: ProviderConfigRow) => new ModelProviderConfig(row, { disableValidation: true })
const notFound = (id: ModelProviderConfigId) => () => new NotFound({ error: `Model provider config ${id} not found` })
const nameTaken = (name: string) => () =>
  new Conflict({ error: `The organization has a model provider config named "${name}" already; pick another name` })

export class ModelProviderConfigs extends Effect.Service<ModelProviderConfigs>()("ModelProviderConfigs", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access
    const secrets = yield* Secrets
    const columns = sql.unsafe(COLUMNS)

    /** The credential must be a secret the caller can see in this organization; held until the transaction ends. */
    const requireAuthSecret = (orgId: OrgId, secretId: SecretId) =>
      secrets.visible(orgId, secretId, "share").pipe(
        Effect.catchTag("NotFound", () =>
          Effect.fail(
            new InvalidRequest({
              error: `Secret ${secretId} is neither an organization secret of ${orgId} nor one of your personal secrets there`,
              issues: [{ path: "/auth_secret_id", message: "no such secret visible to the caller in this organization" }]
            })
          ))
      )

    const find = (orgId: OrgId, id: ModelProviderConfigId, lock: boolean) =>
      Effect.flatMap(
        sql<ProviderConfigRow>`
          SELECT ${columns} FROM model_provider_configs WHERE id = ${id} AND org_id = ${orgId}
          ${lock ? sql`FOR UPDATE` : sql``}`.pipe(Effect.orDie),
        firstOr(notFound(id))
      )

    /** A tenant-managed config the caller (an org admin) may change. */
    const changeable = (orgId: OrgId, id: ModelProviderConfigId, action: string) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        const row = yield* find(orgId, id, true)
        if (row.management_kind === "cluster") {
          return yield* Effect.fail(
            new Forbidden({ error: `Model provider config ${id} is cluster-managed; it cannot be ${action} through this API` })
          )
        }
        return row
      })

    const create = (orgId: OrgId, input: CreateModelProviderConfig) =>
      Effect.gen(function*() {
        yield* access.requireOrgRole(orgId, "admin")
        const authSecretId = input.auth_secret_id ?? null
        if (authSecretId !== null) yield* requireAuthSecret(orgId, authSecretId)
        const rows = yield* sql<ProviderConfigRow>`
          INSERT INTO model_provider_configs ${
          sql.insert({
            id: ModelProviderConfigId.make(),
            org_id: orgId,
            name: input.name,
            description: input.description ?? null,
            api_format: input.api_format,
            base_url: input.base_url,
            auth_secret_id: authSecretId,
            management_kind: "tenant"
          })
        }
          RETURNING ${columns}`.pipe(onDuplicate(nameTaken(input.name)))
        return toProviderConfig(rows[0])
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const list = (orgId: OrgId, query: ListQuery) =>
      Effect.gen(function*() {
        yield* access.orgRole(orgId)
        const { after, limit } = yield* pageRequest(query)
        const rows = yield* sql<ProviderConfigRow>`
          SELECT ${columns} FROM model_provider_configs
          WHERE org_id = ${orgId} ${after === undefined ? sql`` : sql`AND id > ${after}`}
          ORDER BY id LIMIT ${limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toProviderConfig), limit, (config) => config.id)
      })

    const get = (orgId: OrgId, id: ModelProviderConfigId) =>
      Effect.gen(function*() {
        yield* access.orgRole(orgId)
        return toProviderConfig(yield* find(orgId, id, false))
      })

    const update = (orgId: OrgId, id: ModelProviderConfigId, patch: UpdateModelProviderConfig) =>
      Effect.gen(function*() {
        const row = yield* changeable(orgId, id, "changed")
        const authSecretId = patch.auth_secret_id === undefined ? row.auth_secret_id : patch.auth_secret_id
        if (authSecretId !== null && authSecretId !== row.auth_secret_id) yield* requireAuthSecret(orgId, authSecretId)
        const name = patch.name ?? row.name
        const rows = yield* sql<ProviderConfigRow>`
          UPDATE model_provider_configs SET ${
          sql.update({
            name,
            description: patch.description === undefined ? row.description : patch.description,
            api_format: patch.api_format ?? row.api_format,
            base_url: patch.base_url ?? row.base_url,
            auth_secret_id: authSecretId
          })
        }, updated_at = now()
          WHERE id = ${id}
          RETURNING ${columns}`.pipe(onDuplicate(nameTaken(name)))
        return toProviderConfig(rows[0])
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const remove = (orgId: OrgId, id: ModelProviderConfigId) =>
      Effect.gen(function*() {
        yield* changeable(orgId, id, "deleted")
        const models = yield* sql<{ id: string; name: string }>`
          SELECT id, name FROM configured_models WHERE provider_config_id = ${id} ORDER BY id`
        if (models.length > 0) {
          return yield* Effect.fail(
            new Conflict({
              error: `Model provider config ${id} has configured models: ` +
                models.map((model) => `"${model.name}" (${model.id})`).join(", ") + `; delete them first`
            })
          )
        }
        yield* sql`DELETE FROM model_provider_configs WHERE id = ${id}`
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { create, list, get, update, remove } as const
  })
}) {}
